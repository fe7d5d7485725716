import Codecs
import Foundation
import Logging
import Media
import Testing
import TestSupport

@testable import Publishing

/// A participant's tracks written as received: real VP8, H.264 and Opus frames (the project's encoders) with RTP
/// timestamps across the 32-bit wrap, read back by ffprobe and ffmpeg.
@Suite("Track recordings")
struct TrackRecorderTests {
    static let green = YUVColor(r: 40, g: 200, b: 40)

    final class Finished: @unchecked Sendable {
        private let lock = NSLock()
        private var value: TrackRecorder.Summary?
        var summary: TrackRecorder.Summary? { lock.withLock { value } }
        func set(_ s: TrackRecorder.Summary) { lock.withLock { value = s } }
    }

    static func path(_ ext: String) -> String {
        NSTemporaryDirectory() + "cohost-track-\(UUID().uuidString).\(ext)"
    }

    /// `seconds` of 30 fps video (`encode` gives each picture's frames) and 20 ms Opus frames, fed as a receiver
    /// would: RTP timestamps starting just below the wrap, arrival times in step.
    static func feed(
        _ recorder: TrackRecorder, seconds: Int, skipFirstVideo: Int = 0,
        encode: ((VideoFrame, Int64) throws -> [(data: [UInt8], key: Bool)])?
    ) throws {
        var frame = VideoFrame(width: 320, height: 240)
        frame.fill(Self.green)
        let opus = try OpusEncoder(channels: 2, bitrate: 64_000)
        var tone = [Float](repeating: 0, count: 960 * 2)
        var videoIndex: Int64 = 0
        for block in 0..<(seconds * 50) {
            for i in 0..<960 {
                let v = Float(0.3 * sin(2 * Double.pi * 440 * Double(block * 960 + i) / 48_000))
                tone[2 * i] = v
                tone[2 * i + 1] = v
            }
            let ms = Int64(block * 20)
            recorder.audio(
                try opus.encode(tone), rtpTimestamp: 0xFFFF_F000 &+ UInt32(block * 960), arrivalMs: 1_000 + ms)
            while let encode, videoIndex * 1000 / 30 <= ms {
                for unit in try encode(frame, videoIndex) where videoIndex >= skipFirstVideo {
                    recorder.video(
                        unit.data, rtpTimestamp: 0xFFFF_0000 &+ UInt32(videoIndex * 3000), isKeyframe: unit.key,
                        arrivalMs: 1_000 + videoIndex * 1000 / 30)
                }
                videoIndex += 1
            }
        }
    }

    /// The EBML header's DocType: "webm" or "matroska".
    static func docType(_ path: String) throws -> String? {
        let head = try Data(contentsOf: URL(fileURLWithPath: path)).prefix(64)
        let text = String(decoding: head.map { $0 >= 0x20 && $0 < 0x7F ? $0 : 0x20 }, as: UTF8.self)
        return ["webm", "matroska"].first { text.contains($0) }
    }

    static func probe(_ path: String, _ entries: String) throws -> [String] {
        let result = try run(
            "ffprobe", ["-v", "error", "-count_packets", "-show_entries", entries, "-of", "csv=p=0", path],
            timeout: 15)
        return String(decoding: result.stdout, as: UTF8.self).split(whereSeparator: \.isNewline).map(String.init)
    }

    @Test("VP8 and Opus go into WebM as they came: every frame, the picture and the sound, 3 s long")
    func vp8AndOpus() throws {
        let file = Self.path("webm")
        defer { try? FileManager.default.removeItem(atPath: file) }
        let finished = Finished()
        let recorder = try TrackRecorder(
            path: file, video: .vp8, audio: true, startMs: 1_000, maxQueued: 1000, logger: Logger(label: "test")
        ) { finished.set($0) }
        let vp8 = try VP8Encoder(width: 320, height: 240, fps: 30, bitrateKbps: 500)
        try Self.feed(recorder, seconds: 3) { frame, index in
            try vp8.encode(frame, pts: index, forceKeyframe: index == 0).map { ($0.data, $0.isKeyframe) }
        }
        recorder.stop()
        let summary = try #require(finished.summary)
        #expect(summary.videoFrames == 90 && summary.audioFrames == 150 && summary.error == nil, "\(summary)")
        #expect(summary.durationMs >= 2960 && summary.durationMs <= 3000, "\(summary.durationMs)")
        #expect(try Self.docType(file) == "webm")
        #expect(try Self.probe(file, "stream=codec_name,width,nb_read_packets") == ["vp8,320,90", "opus,150"])
        let rgb = try decodeFirstVideoFrameRGB(path: file, width: 32, height: 24)
        #expect(RGB.mean(rgb).g > 150 && RGB.mean(rgb).r < 90)
        let pcm = Array(try decodeAudioS16Mono(url: file, seconds: 2).dropFirst(4800).prefix(9600))
        let tone = Goertzel.power(samples: pcm, sampleRate: 48_000, frequency: 440)
        #expect(tone > 100 * Goertzel.power(samples: pcm, sampleRate: 48_000, frequency: 1000))
    }

    @Test("H.264 goes into Matroska with the keyframe's parameter sets as its codec private data")
    func h264() throws {
        let file = Self.path("mkv")
        defer { try? FileManager.default.removeItem(atPath: file) }
        let finished = Finished()
        let recorder = try TrackRecorder(
            path: file, video: .h264, audio: true, startMs: 1_000, maxQueued: 1000, logger: Logger(label: "test")
        ) { finished.set($0) }
        let h264 = try H264Encoder(
            config: H264EncoderConfig(
                width: 320, height: 240, fps: 30, bitrateKbps: 500, keyintFrames: 30, profile: .baseline))
        let record = h264.decoderConfigurationRecord
        // What a depacketizer gives: Annex B, the parameter sets before each IDR (as browsers send them).
        let spsLength = Int(record[6]) << 8 | Int(record[7])
        let sps = Array(record[8..<(8 + spsLength)])
        let ppsAt = 8 + spsLength + 1
        let pps = Array(record[(ppsAt + 2)..<(ppsAt + 2 + (Int(record[ppsAt]) << 8 | Int(record[ppsAt + 1])))])
        // The first five pictures are lost: recording starts at the keyframe of second 1.
        try Self.feed(recorder, seconds: 3, skipFirstVideo: 5) { frame, index in
            guard let encoded = try h264.encode(frame, pts: index, forceKeyframe: index == 0) else { return [] }
            do {
                var annexB: [UInt8] = encoded.isKeyframe ? [0, 0, 0, 1] + sps + [0, 0, 0, 1] + pps : []
                var i = 0
                while i + 4 <= encoded.data.count {
                    let n =
                        Int(encoded.data[i]) << 24 | Int(encoded.data[i + 1]) << 16
                        | Int(encoded.data[i + 2]) << 8 | Int(encoded.data[i + 3])
                    annexB += [0, 0, 0, 1] + encoded.data[(i + 4)..<min(encoded.data.count, i + 4 + n)]
                    i += 4 + n
                }
                return [(annexB, encoded.isKeyframe)]
            }
        }
        recorder.stop()
        let summary = try #require(finished.summary)
        #expect(summary.videoFrames == 60, "frames from the keyframe at 1 s")
        #expect(try Self.docType(file) == "matroska")
        #expect(try Self.probe(file, "stream=codec_name,width,nb_read_packets") == ["h264,320,60", "opus,150"])
        let decode = try run("ffmpeg", ["-v", "error", "-nostdin", "-i", file, "-f", "null", "-"], timeout: 30)
        #expect(decode.status == 0 && decode.stderr.isEmpty, "\(decode.stderr)")
    }

    @Test("an audio-only recording is WebM with Opus alone; a recording of nothing is refused")
    func audioOnly() throws {
        let file = Self.path("webm")
        defer { try? FileManager.default.removeItem(atPath: file) }
        let finished = Finished()
        let recorder = try TrackRecorder(
            path: file, video: nil, audio: true, startMs: 1_000, maxQueued: 1000, logger: Logger(label: "test")
        ) { finished.set($0) }
        try Self.feed(recorder, seconds: 2, encode: nil)
        recorder.stop()
        #expect(finished.summary?.audioFrames == 100)
        #expect(try Self.probe(file, "stream=codec_name,nb_read_packets") == ["opus,100"])
        #expect(throws: RecordingError.self) {
            try TrackRecorder(path: Self.path("webm"), video: nil, audio: false, startMs: 0, logger: Logger(label: "t"))
            {
                _ in
            }
        }
        #expect(throws: RecordingError.self) {
            try TrackRecorder(path: file, video: nil, audio: true, startMs: 0, logger: Logger(label: "t")) { _ in }
        }
    }

    @Test("RTP timestamps are unwrapped and anchored at the first frame's arrival, never going back")
    func clock() {
        var clock = TrackClock(rate: 90_000)
        #expect(clock.ms(0xFFFF_FF00, arrivalMs: 500) == 500)
        #expect(clock.ms(0x0000_2000, arrivalMs: 600) == 500 + (0x2000 + 0x100) / 90)
        #expect(clock.ms(0x0000_1000, arrivalMs: 610) == 500 + (0x2000 + 0x100) / 90, "a step back is held")
    }
}
