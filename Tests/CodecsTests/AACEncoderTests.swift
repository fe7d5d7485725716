import Testing
import Foundation
import Media
@testable import Codecs

@Suite("AACEncoder")
struct AACEncoderTests {
    /// 20 ms of interleaved stereo: a 440 Hz sine at −12 dBFS, phase continuing from `block`.
    static func block(_ block: Int) -> [Float] {
        var out = [Float](repeating: 0, count: 1920)
        for i in 0..<960 {
            let t = Double(block * 960 + i) / 48_000
            let s = Float(0.25 * sin(2 * Double.pi * 440 * t))
            out[2 * i] = s
            out[2 * i + 1] = s
        }
        return out
    }

    @Test(
        "AudioSpecificConfig announces AAC-LC, 48 kHz, stereo (11 90) or mono (11 88)",
        arguments: [(2, [UInt8(0x11), 0x90]), (1, [0x11, 0x88])])
    func audioSpecificConfig(channels: Int, prefix: [UInt8]) throws {
        let encoder = try AACEncoder(channels: channels, bitrate: 96_000)
        #expect(Array(encoder.audioSpecificConfig.prefix(2)) == prefix)
        #expect(encoder.frameSize == 1024)
    }

    @Test(
        "one second of input yields 45 frames with pts 0, 1024, 2048, … and flush completes the rest",
        arguments: [1, 2])
    func oneSecondOfFrames(channels: Int) throws {
        let encoder = try AACEncoder(channels: channels, bitrate: 96_000)
        var frames: [EncodedAudio] = []
        for b in 0..<50 { frames += try encoder.encode(Self.block(b)) }
        // 48000 samples fill 46 input frames (896 wait for more); libavcodec's aac holds one frame of
        // lookahead, so 45 come out before the flush.
        #expect(frames.count == 45, "got \(frames.count) frames")
        #expect(frames.map(\.pts) == (0..<frames.count).map { Int64($0) * 1024 })
        #expect(frames.allSatisfy { !$0.data.isEmpty && $0.data.count < 1536 })  // raw AAC, no ADTS sync word
        #expect(frames.allSatisfy { !($0.data.count > 1 && $0.data[0] == 0xFF && $0.data[1] & 0xF0 == 0xF0) })
        // 48000 samples plus 1024 priming need ceil(49024 / 1024) = 48 frames in all.
        let rest = try encoder.flush()
        #expect(frames.count + rest.count == 48)
        #expect((frames + rest).map(\.pts) == (0..<48).map { Int64($0) * 1024 })
        #expect(throws: CodecError.self) { try encoder.encode(Self.block(50)) }
    }

    @Test("input split at arbitrary sizes gives the same frames as 960-frame blocks")
    func arbitraryChunking() throws {
        let whole = (0..<10).flatMap { Self.block($0) }
        let a = try AACEncoder(channels: 2, bitrate: 64_000)
        var blocksOut: [EncodedAudio] = []
        for b in 0..<10 { blocksOut += try a.encode(Self.block(b)) }
        let b = try AACEncoder(channels: 2, bitrate: 64_000)
        var oddOut: [EncodedAudio] = []
        var i = 0
        for size in [2, 700, 3000, 14, 5000, 2048] + Array(repeating: 1000, count: 10) where i < whole.count {
            let end = min(whole.count, i + size)
            oddOut += try b.encode(Array(whole[i..<end]))
            i = end
        }
        #expect(i == whole.count)
        #expect(oddOut == blocksOut)
    }

    @Test("bad channel counts and bitrates are refused")
    func refusesBadSettings() {
        #expect(throws: CodecError.self) { try AACEncoder(channels: 3, bitrate: 96_000) }
        #expect(throws: CodecError.self) { try AACEncoder(channels: 2, bitrate: 0) }
    }
}

@Suite("AACEncoder without copies")
struct AACEncoderInPlaceTests {
    @Test(
        "frames handed out in place are the frames `encode` returns, byte for byte, with the same pts",
        arguments: [1, 2])
    func inPlaceFramesMatch(channels: Int) throws {
        let copying = try AACEncoder(channels: channels, bitrate: 64_000)
        let inPlace = try AACEncoder(channels: channels, bitrate: 64_000)
        var expected: [EncodedAudio] = []
        var got: [EncodedAudio] = []
        for b in 0..<40 {
            expected += try copying.encode(AACEncoderTests.block(b))
            try inPlace.encode(AACEncoderTests.block(b)) { data, pts in
                got.append(EncodedAudio(data: Array(data), pts: pts))
            }
        }
        // 40 × 960 samples fill 37 input frames; libavcodec holds one back as lookahead.
        #expect(got.count == 36)
        #expect(got == expected)
    }
}

@Suite("AACEncoder channels")
struct AACEncoderChannelTests {
    /// 20 ms of interleaved stereo with a 440 Hz sine at −12 dBFS on one side and silence on the other.
    static func oneSided(_ block: Int, left: Bool) -> [Float] {
        var out = [Float](repeating: 0, count: 1920)
        for i in 0..<960 {
            let t = Double(block * 960 + i) / 48_000
            out[2 * i + (left ? 0 : 1)] = Float(0.25 * sin(2 * Double.pi * 440 * t))
        }
        return out
    }

    @Test(
        "each input channel reaches its own side of the stream: a tone on one side and silence on the other decode as such",
        arguments: [true, false])
    func channelsStaySeparate(toneOnLeft: Bool) throws {
        let encoder = try AACEncoder(channels: 2, bitrate: 128_000)
        var frames: [EncodedAudio] = []
        for b in 0..<50 { frames += try encoder.encode(Self.oneSided(b, left: toneOnLeft)) }
        frames += try encoder.flush()
        let (left, right) = try AACTestDecoder.decode(frames, audioSpecificConfig: encoder.audioSpecificConfig)
        // Past the priming and the first frames' ramp, a −12 dBFS sine has an RMS of 0.25/√2 ≈ 0.177.
        let tone = toneOnLeft ? left : right, quiet = toneOnLeft ? right : left
        #expect(tone.count >= 48_000)
        let rms = { (s: ArraySlice<Float>) in (s.reduce(0) { $0 + Double($1 * $1) } / Double(s.count)).squareRoot() }
        #expect(abs(rms(tone[4096..<40_960]) - 0.177) < 0.01, "tone RMS \(rms(tone[4096..<40_960]))")
        #expect(rms(quiet[4096..<40_960]) < 0.001, "silent side RMS \(rms(quiet[4096..<40_960]))")
    }
}
