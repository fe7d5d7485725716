import Testing
import TestSupport
import Media
@testable import Codecs

@Suite("H264Encoder")
struct H264EncoderTests {
    static func config(
        _ profile: H264Profile, width: Int = 320, height: Int = 240, kbps: Int = 500
    ) -> H264EncoderConfig {
        H264EncoderConfig(width: width, height: height, fps: 30, bitrateKbps: kbps, keyintFrames: 60, profile: profile)
    }

    /// The NAL unit types (low five bits of the header byte) in an AVCC access unit.
    func nalTypes(_ data: [UInt8]) -> [UInt8]? {
        H264Units.avcc(data)?.map { $0[0] & 0x1F }
    }

    @Test(
        "decoder configuration record carries one SPS and one PPS with the profile and 4-byte lengths",
        arguments: [(H264Profile.baseline, UInt8(66)), (.main, 77), (.high, 100)])
    func decoderConfigurationRecord(profile: H264Profile, idc: UInt8) throws {
        let encoder = try H264Encoder(config: Self.config(profile))
        let r = encoder.decoderConfigurationRecord
        try #require(r.count > 11)
        #expect(r[0] == 1)
        #expect(r[1] == idc)
        #expect(r[4] & 0x03 == 3)  // lengthSizeMinusOne
        #expect(r[5] & 0x1F == 1)  // one SPS
        let spsLength = Int(r[6]) << 8 | Int(r[7])
        try #require(8 + spsLength + 3 <= r.count)
        #expect(r[8] & 0x1F == 7)  // SPS NAL
        #expect(r[9] == idc)  // profile_idc inside the SPS agrees
        #expect(r[1...3] == r[9...11])  // profile, constraints, level copied from the SPS
        let p = 8 + spsLength
        #expect(r[p] == 1)  // one PPS
        let ppsLength = Int(r[p + 1]) << 8 | Int(r[p + 2])
        #expect(r[p + 3] & 0x1F == 8)  // PPS NAL
        // High profile appends chroma format / bit depth (4 bytes); the others end after the PPS.
        let tail = idc == 100 ? [0xFD, 0xF8, 0xF8, 0] as [UInt8] : []
        #expect(r.count == p + 3 + ppsLength + tail.count)
        #expect(Array(r.suffix(tail.count)) == tail)
    }

    @Test("first frame is an IDR keyframe whose AVCC lengths add up to the data")
    func firstFrameIsKeyframe() throws {
        let encoder = try H264Encoder(config: Self.config(.baseline))
        let frame = TestFrames.quadrants(width: 320, height: 240)
        let out = try #require(try encoder.encode(frame, pts: 0, forceKeyframe: false))
        #expect(out.isKeyframe)
        #expect(out.pts == 0 && out.dts == 0)
        let nals = try #require(H264Units.avcc(out.data))
        #expect(nals.reduce(0) { $0 + 4 + $1.count } == out.data.count)
        let types = nals.map { $0[0] & 0x1F }
        #expect(types.contains(5))  // IDR slice
        #expect(!types.contains(7) && !types.contains(8))  // no in-band SPS/PPS (b_repeat_headers = 0)
    }

    @Test("forceKeyframe turns an ordinary P-frame into an IDR; pts pass through")
    func forceKeyframe() throws {
        let encoder = try H264Encoder(config: Self.config(.high))
        var results: [EncodedVideo] = []
        for i in 0..<6 {
            let frame = TestFrames.noise(width: 320, height: 240, seed: UInt32(i))
            results.append(try #require(try encoder.encode(frame, pts: Int64(i), forceKeyframe: i == 4)))
        }
        #expect(results.map(\.isKeyframe) == [true, false, false, false, true, false])
        #expect(results.map(\.pts) == [0, 1, 2, 3, 4, 5])
        #expect(results.map(\.dts) == [0, 1, 2, 3, 4, 5])  // zerolatency: no B-frames, no reordering
        #expect(nalTypes(results[4].data)?.contains(5) == true)
        #expect(nalTypes(results[3].data)?.allSatisfy { $0 != 5 } == true)
    }

    @Test("a canvas that changes completely every frame still gets keyframes only on the interval")
    func fixedKeyframeInterval() throws {
        let config = H264EncoderConfig(
            width: 320, height: 240, fps: 30, bitrateKbps: 500, keyintFrames: 10, profile: .high)
        let encoder = try H264Encoder(config: config)
        var keyframes: [Int] = []
        for i in 0..<25 {
            let frame = TestFrames.noise(width: 320, height: 240, seed: UInt32(i))  // every frame a scene cut
            if try #require(try encoder.encode(frame, pts: Int64(i), forceKeyframe: false)).isKeyframe {
                keyframes.append(i)
            }
        }
        #expect(keyframes == [0, 10, 20])
    }

    @Test("reconfigure lowers the bitrate of the running encoder")
    func reconfigureLowersBitrate() throws {
        let encoder = try H264Encoder(config: Self.config(.baseline, kbps: 3000))
        func averageSize(from start: Int) throws -> Int {
            var total = 0
            for i in start..<(start + 30) {
                let frame = TestFrames.noise(width: 320, height: 240, seed: UInt32(i))
                let out = try encoder.encode(frame, pts: Int64(i), forceKeyframe: false)
                if i >= start + 10 { total += out?.data.count ?? 0 }
            }
            return total / 20
        }
        let high = try averageSize(from: 0)
        try encoder.reconfigure(bitrateKbps: 100)
        let low = try averageSize(from: 30)
        #expect(low * 3 < high, "average frame \(high) bytes at 3000 kbps, \(low) bytes at 100 kbps")
    }

    @Test("odd sizes and wrong-size frames are refused with an x264 CodecError")
    func refusesBadInput() throws {
        #expect(throws: CodecError.self) { try H264Encoder(config: Self.config(.baseline, width: 321)) }
        #expect(throws: CodecError.self) { try H264Encoder(config: Self.config(.baseline, kbps: 0)) }
        let encoder = try H264Encoder(config: Self.config(.baseline))
        do {
            _ = try encoder.encode(VideoFrame(width: 160, height: 120), pts: 0, forceKeyframe: false)
            Issue.record("a 160x120 frame was accepted by a 320x240 encoder")
        } catch {
            #expect(error.library == "x264")
        }
    }
}

@Suite("H264Encoder without copies")
struct H264EncoderInPlaceTests {
    @Test("access units handed out in place are the ones `encode` returns (single-threaded x264 is deterministic)")
    func inPlaceAccessUnitsMatch() throws {
        var config = H264EncoderTests.config(.high)
        config.threads = 1
        let copying = try H264Encoder(config: config)
        let inPlace = try H264Encoder(config: config)
        var frames = 0
        for i in 0..<20 {
            let frame = TestFrames.noise(width: 320, height: 240, seed: UInt32(i))
            let expected = try copying.encode(frame, pts: Int64(i), forceKeyframe: i == 10)
            let got = try inPlace.encode(frame, pts: Int64(i), forceKeyframe: i == 10) { avcc, isKeyframe, pts, dts in
                EncodedVideo(data: Array(avcc), isKeyframe: isKeyframe, pts: pts, dts: dts)
            }
            #expect(got == expected)
            if got != nil { frames += 1 }
        }
        #expect(frames == 20)
    }
}
