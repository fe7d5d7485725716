/// An I420 picture with a full-resolution 8-bit alpha plane (0 = transparent, 255 = opaque, straight alpha):
/// a decoded PNG used as a background image, watermark or placeholder image.
///
/// Immutable once made, so `isOpaque` is worked out once and lets the compositor copy instead of blend.
public struct AlphaPicture: Sendable {
    public let picture: VideoFrame
    /// `picture.width · picture.height` bytes, rows top to bottom, no padding.
    public let alpha: [UInt8]
    /// True when every alpha value is 255.
    public let isOpaque: Bool

    public var width: Int { picture.width }
    public var height: Int { picture.height }

    /// nil when `alpha` does not hold exactly one byte per luma pixel.
    public init?(picture: VideoFrame, alpha: [UInt8]) {
        guard alpha.count == picture.width * picture.height else { return nil }
        self.picture = picture
        self.alpha = alpha
        isOpaque = alpha.allSatisfy { $0 == 255 }
    }

    /// A fully opaque picture.
    public init(opaque picture: VideoFrame) {
        self.picture = picture
        alpha = [UInt8](repeating: 255, count: picture.width * picture.height)
        isOpaque = true
    }

    /// The alpha at one luma position; for tests.
    public func alpha(x: Int, y: Int) -> UInt8 { alpha[y * picture.width + x] }
}
