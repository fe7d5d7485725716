import Codecs
import Foundation
import Media
import Publishing

/// A real H.264 + AAC programme as FLV tags, encoded with the project's own encoders:
/// solid-colour canvases (one colour per segment) and a stereo sine tone, interleaved by timestamp.
struct EncodedProgramme {
    let width: Int
    let height: Int
    let fps: Int
    let headers: [FLVTag]
    /// Media (and optional data) tags in non-decreasing timestamp order.
    let tags: [FLVTag]

    /// - Parameters:
    ///   - segments: (seconds, colour) pairs played one after the other.
    ///   - dataEveryMs: also interleave an `onVoiceLevels` data tag this often (nil: none).
    ///   - audioOnly: no video tags, no video headers.
    init(
        segments: [(seconds: Double, color: YUVColor)], toneHz: Double = 440, width: Int = 320, height: Int = 240,
        fps: Int = 24, dataEveryMs: Int? = nil, audioOnly: Bool = false
    ) throws {
        self.width = width
        self.height = height
        self.fps = fps
        let totalSeconds = segments.reduce(0) { $0 + $1.seconds }
        let aac = try AACEncoder(channels: 2, bitrate: 128_000)
        var video: [FLVTag] = []
        var headers = [
            FLVMuxer.metadataTag(
                FLVStreamInfo(
                    width: width, height: height, fps: fps,
                    videoBitrateKbps: audioOnly ? nil : 500,
                    audioSampleRate: 48_000, audioChannels: 2,
                    audioBitrateKbps: 128, encoder: "Cohost tests"))
        ]
        if !audioOnly {
            let h264 = try H264Encoder(
                config: H264EncoderConfig(
                    width: width, height: height, fps: fps, bitrateKbps: 500,
                    keyintFrames: fps, profile: .baseline))
            headers.append(FLVMuxer.avcSequenceHeader(h264.decoderConfigurationRecord))
            var frame = VideoFrame(width: width, height: height)
            var index: Int64 = 0
            for segment in segments {
                frame.fill(segment.color)
                for _ in 0..<Int((segment.seconds * Double(fps)).rounded()) {
                    if let encoded = try h264.encode(frame, pts: index, forceKeyframe: index == 0) {
                        video.append(
                            FLVMuxer.videoTag(
                                avcc: encoded.data, isKeyframe: encoded.isKeyframe,
                                timestampMs: UInt32(encoded.dts * 1000 / Int64(fps)),
                                compositionTimeMs: Int32((encoded.pts - encoded.dts) * 1000 / Int64(fps))))
                    }
                    index += 1
                }
            }
        }
        headers.append(FLVMuxer.aacSequenceHeader(aac.audioSpecificConfig))
        self.headers = headers

        var audio: [FLVTag] = []
        let blockFrames = AudioFormat.blockFrames
        let blocks = Int(totalSeconds * 1000) / AudioFormat.blockMilliseconds
        var block = [Float](repeating: 0, count: blockFrames * 2)  // reused per 20 ms block
        for blockIndex in 0..<blocks {
            for i in 0..<blockFrames {
                let t = Double(blockIndex * blockFrames + i) / Double(AudioFormat.sampleRate)
                let sample = Float(0.5 * sin(2 * Double.pi * toneHz * t))
                block[2 * i] = sample
                block[2 * i + 1] = sample
            }
            for encoded in try aac.encode(block) {
                audio.append(
                    FLVMuxer.audioTag(
                        aac: encoded.data,
                        timestampMs: UInt32(encoded.pts * 1000 / Int64(AudioFormat.sampleRate))))
            }
        }

        var data: [FLVTag] = []
        if let dataEveryMs {
            for ms in stride(from: 0, to: Int(totalSeconds * 1000), by: dataEveryMs) {
                data.append(
                    FLVMuxer.dataTag(
                        name: "onVoiceLevels",
                        values: [.object([AMF0Property("alice", .number(0.5))])],
                        timestampMs: UInt32(ms)))
            }
        }
        // Stable merge by timestamp keeps each kind's own order.
        tags = (video + audio + data).enumerated()
            .sorted { ($0.element.timestampMs, $0.offset) < ($1.element.timestampMs, $1.offset) }
            .map(\.element)
    }

    /// Sends `tags` to `output`, sleeping so that media time advances `speed` times faster than wall time;
    /// stops early once `done` (asked after each tag) says so.
    static func send(
        _ tags: some Sequence<FLVTag>, to output: any Output, speed: Double,
        until done: (FLVTag) -> Bool = { _ in false }
    ) {
        let began = Date()
        var firstMs: UInt32?
        for tag in tags {
            let origin = firstMs ?? tag.timestampMs
            firstMs = origin
            let due = Double(tag.timestampMs - origin) / 1000 / speed
            let wait = due - Date().timeIntervalSince(began)
            if wait > 0 { usleep(UInt32(wait * 1_000_000)) }
            output.send(tag)
            if done(tag) { return }
        }
    }
}

/// Colour checks on decoded RGB24 pictures.
enum RGB {
    /// The average colour of the picture.
    static func mean(_ rgb: [UInt8]) -> (r: Double, g: Double, b: Double) {
        let pixels = Double(rgb.count / 3)
        var sums = (0.0, 0.0, 0.0)
        for i in stride(from: 0, to: rgb.count - 2, by: 3) {
            sums.0 += Double(rgb[i])
            sums.1 += Double(rgb[i + 1])
            sums.2 += Double(rgb[i + 2])
        }
        return (sums.0 / pixels, sums.1 / pixels, sums.2 / pixels)
    }

    static func isClose(_ rgb: [UInt8], to target: (r: Double, g: Double, b: Double), tolerance: Double = 12) -> Bool {
        let m = mean(rgb)
        return abs(m.r - target.r) <= tolerance && abs(m.g - target.g) <= tolerance && abs(m.b - target.b) <= tolerance
    }
}
