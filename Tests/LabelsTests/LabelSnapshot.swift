import Codecs
import Labels
import Media

/// A label blended over mid-grey the way the compositor blends it (`ImageOps.blend` with the alpha plane), so
/// the box's transparency shows in a plain RGB PNG.
struct LabelSnapshot {
    let picture: VideoFrame

    static let grey = YUVColor(r: 128, g: 128, b: 128)

    init(_ label: LabelImage) {
        var canvas = VideoFrame(width: label.width, height: label.height, color: Self.grey)
        let image = label.image
        ImageOps.blend(
            image.picture, alpha: image.alpha,
            chromaAlpha: ImageOps.chromaAlpha(image.alpha, width: image.width, height: image.height), opacity: 1,
            into: &canvas, x: 0, y: 0)
        picture = canvas
    }

    func png() throws -> [UInt8] { try PNGEncoder.encode(picture) }

    /// How far `self` is from `other`, plane by plane (Y, U, V): the mean absolute difference of each, and the
    /// share of samples of all planes that differ by more than 40. nil when the sizes differ.
    func difference(from other: VideoFrame) -> (meanY: Double, meanU: Double, meanV: Double, farShare: Double)? {
        guard other.width == picture.width, other.height == picture.height else { return nil }
        var far = 0
        func mean(_ a: [UInt8], _ b: [UInt8]) -> Double {
            var sum = 0
            for i in a.indices {
                let d = abs(Int(a[i]) - Int(b[i]))
                sum += d
                if d > 40 { far += 1 }
            }
            return Double(sum) / Double(max(1, a.count))
        }
        let meanY = mean(picture.y, other.y), meanU = mean(picture.u, other.u), meanV = mean(picture.v, other.v)
        let samples = picture.y.count + picture.u.count + picture.v.count
        return (meanY, meanU, meanV, Double(far) / Double(samples))
    }
}
