import Codecs
import Foundation
import Media

/// What every synthetic participant sends, encoded once before the run and replayed in a loop: a second of a voice
/// tone as Opus packets (a whole number of periods, so the loop has no seam), and `videoSeconds` of a moving picture
/// as VP8 frames whose first is the loop's keyframe. Encoding once keeps the load tester's own CPU out of the
/// measurement: sending is a copy and a `sendto`.
public struct SyntheticClip: Sendable {
    /// Opus packets, 20 ms each.
    public let audio: [[UInt8]]
    /// VP8 frames at `fps`, the first a keyframe; empty for audio-only rooms.
    public let video: [[UInt8]]
    public let fps: Int
    public let width: Int
    public let height: Int

    public static let toneHz = 440.0

    /// `video` nil: audio only.
    public init(video: (width: Int, height: Int, fps: Int, kbps: Int)?, videoSeconds: Int = 2) throws {
        let encoder = try OpusEncoder(channels: 1, bitrate: 32_000, voice: true)
        let frames = AudioFormat.blockFrames
        var audio: [[UInt8]] = []
        for block in 0..<50 {
            let pcm = (0..<frames).map { i -> Float in
                let t = Double(block * frames + i) / Double(AudioFormat.sampleRate)
                return Float(0.2 * sin(2 * Double.pi * Self.toneHz * t))
            }
            audio.append(try encoder.encode(pcm))
        }
        self.audio = audio
        guard let video else {
            self.video = []
            fps = 0
            width = 0
            height = 0
            return
        }
        let vp8 = try VP8Encoder(width: video.width, height: video.height, fps: video.fps, bitrateKbps: video.kbps)
        var picture = VideoFrame(width: video.width, height: video.height)
        var encoded: [[UInt8]] = []
        let count = video.fps * videoSeconds
        for n in 0..<count {
            Self.draw(&picture, frame: n, of: count)
            for packet in try vp8.encode(picture, pts: Int64(n), forceKeyframe: n == 0) {
                encoded.append(packet.data)
            }
        }
        guard encoded.count == count, !encoded.isEmpty else {
            throw LoadTestError("the VP8 encoder gave \(encoded.count) frames for \(count) pictures")
        }
        self.video = encoded
        fps = video.fps
        width = video.width
        height = video.height
    }

    /// A diagonal gradient with a bar sweeping across once per loop: motion everywhere, as a camera gives.
    static func draw(_ picture: inout VideoFrame, frame: Int, of count: Int) {
        let w = picture.width, h = picture.height
        let bar = frame * w / count
        for row in 0..<h {
            for col in 0..<w {
                let inBar = col >= bar && col < bar + w / 10
                picture.y[row * w + col] = inBar ? 235 : UInt8(truncatingIfNeeded: (row + col + frame * 4) / 3 + 16)
            }
        }
        let cw = picture.strideUV
        for row in 0..<picture.chromaHeight {
            for col in 0..<cw {
                picture.u[row * cw + col] = UInt8(truncatingIfNeeded: 96 + (col * 64) / cw)
                picture.v[row * cw + col] = UInt8(truncatingIfNeeded: 160 - (row * 64) / picture.chromaHeight)
            }
        }
    }
}

/// Why a load test could not start or run.
public struct LoadTestError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
