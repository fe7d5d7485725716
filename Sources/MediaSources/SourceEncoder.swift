import Codecs
import Foundation
import Media

/// A source's pictures encoded once for every receiver's slot that shows it, when its own stream cannot be
/// forwarded as it is (H.265, MJPEG, H.264 with B-frames, a profile browsers do not take): x264 in the profile the
/// source's participant announced (constrained baseline, or the source's own main or high on a reconnect that
/// changed what the camera sends), without B-frames, a keyframe every 2 s and whenever a slot asks. The encoder is
/// made at the first picture and again when the pictures change size. Confined to the source's reading thread.
final class SourceEncoder {
    let profile: H264Profile
    private var encoder: H264Encoder?
    private var frame: VideoFrame?
    private var frames: Int64 = 0
    private(set) var encoded = 0

    static let fps = 30
    static let keyintFrames = 60

    init(format: SourceVideoFormat) {
        profile =
            format.profileIDC == 0x64 ? .high : format.profileIDC == 0x4D ? .main : .baseline
    }

    /// What x264 aims at for a picture of that size: about 0.07 bit per pixel at 30 frames/s, 300 kbit/s to 4 Mbit/s.
    static func bitrateKbps(width: Int, height: Int) -> Int {
        min(4000, max(300, width * height * fps * 7 / 100_000))
    }

    /// The level announced for pictures up to `maxWidth`×`maxHeight`.
    static func level(maxWidth: Int, maxHeight: Int) -> UInt8 {
        let kbps = bitrateKbps(width: maxWidth, height: maxHeight)
        return H264Level.minimumLevel(
            width: maxWidth, height: maxHeight, fps: fps, bitrateKbps: kbps, profile: .baseline)?.levelIDC ?? 0x28
    }

    /// Encodes one picture (cropped to even sides) and hands the access unit (AVCC), whether it is a keyframe and
    /// the encoder's parameter sets to `body`.
    func encode(
        _ picture: SourcePicture, forceKeyframe: Bool,
        _ body: (UnsafeRawBufferPointer, Bool, (sps: [UInt8], pps: [UInt8])) -> Void
    ) throws(CodecError) {
        let width = picture.width & ~1
        let height = picture.height & ~1
        guard width >= 16, height >= 16 else { return }
        var force = forceKeyframe
        if encoder?.config.width != width || encoder?.config.height != height {
            encoder = try H264Encoder(
                config: H264EncoderConfig(
                    width: width, height: height, fps: Self.fps,
                    bitrateKbps: Self.bitrateKbps(width: width, height: height), keyintFrames: Self.keyintFrames,
                    profile: profile))
            frame = VideoFrame(width: width, height: height)
            force = true
        }
        guard let encoder, var frame else { return }
        self.frame = nil  // `frame` is the only reference while it is written: no copy on write
        picture.withPlanes { planes in
            Self.copy(planes.y, stride: planes.strideY, into: &frame.y, width: width, height: height)
            let cw = (width + 1) / 2
            let ch = (height + 1) / 2
            Self.copy(planes.u, stride: planes.strideU, into: &frame.u, width: cw, height: ch)
            Self.copy(planes.v, stride: planes.strideV, into: &frame.v, width: cw, height: ch)
        }
        defer { self.frame = frame }
        frames += 1
        let sets = encoder.parameterSets
        _ = try encoder.encode(frame, pts: frames, forceKeyframe: force) { avcc, keyframe, _, _ in
            encoded += 1
            body(avcc, keyframe, sets)
        }
    }

    private static func copy(
        _ source: UnsafePointer<UInt8>, stride: Int, into plane: inout [UInt8], width: Int, height: Int
    ) {
        plane.withUnsafeMutableBufferPointer { out in
            guard let base = out.baseAddress else { return }
            for row in 0..<height { memcpy(base + row * width, source + row * stride, width) }
        }
    }
}
