import Testing
import Media
@testable import Codecs

/// The libavcodec decoders' buffers: every picture in one pooled buffer (picture_pool.h), one reference-counted
/// input buffer reused frame after frame, and pictures identical to what libavcodec's own buffers give.
@Suite("Decoder buffers")
struct DecoderBuffersTests {
    /// Quadrants with a 32×32 noise patch that moves 8 pixels right per frame: inter frames with real motion
    /// that stay smaller than the keyframe.
    static func movingPatch(width: Int, height: Int, frame i: Int) -> VideoFrame {
        var f = TestFrames.quadrants(width: width, height: height)
        let patch = TestFrames.noise(width: 32, height: 32, seed: 7)
        let x0 = (8 * i) % (width - 32), y0 = height / 4
        for row in 0..<32 {
            for col in 0..<32 { f.y[(y0 + row) * f.strideY + x0 + col] = patch.y[row * 32 + col] }
        }
        return f
    }

    static func same(_ a: VideoFrame, _ b: VideoFrame) -> Bool {
        a.width == b.width && a.height == b.height && a.y == b.y && a.u == b.u && a.v == b.v
    }

    @Test(
        "VP8: every picture comes from the pool, one layout per size, one input buffer, same pixels as libavcodec's buffers"
    )
    func vp8() throws {
        var packets: [[UInt8]] = []
        for (width, height, count) in [(320, 240, 20), (160, 120, 10)] {
            let encoder = try VP8Encoder(width: width, height: height, fps: 30, bitrateKbps: 600)
            for i in 0..<count {
                packets += try encoder.encode(
                    Self.movingPatch(width: width, height: height, frame: i), pts: Int64(i),
                    forceKeyframe: false
                ).map(\.data)
            }
        }
        try #require(packets.count == 30)
        // The first keyframe is the largest packet, so one input buffer serves the whole stream.
        try #require(packets.allSatisfy { $0.count <= packets[0].count })
        let pooled = try VP8Decoder(), plain = try VP8Decoder(unpooledMaxWidth: 4096, maxHeight: 4096)
        var a = VideoFrame(width: 16, height: 16), b = VideoFrame(width: 16, height: 16)
        var identical = 0
        for packet in packets {
            #expect(try pooled.decode(packet, into: &a))
            #expect(try plain.decode(packet, into: &b))
            if Self.same(a, b) { identical += 1 }
        }
        #expect(identical == 30)
        #expect(a.width == 160 && a.height == 120)
        #expect(pooled.bufferCounts == DecoderBufferCounts(pictures: 30, layouts: 2, inputs: 1))
        #expect(plain.bufferCounts == DecoderBufferCounts(pictures: 0, layouts: 0, inputs: 1))
    }

    @Test("H.264: every picture comes from the pool and matches libavcodec's own buffers")
    func h264() throws {
        let config = H264EncoderConfig(
            width: 320, height: 240, fps: 30, bitrateKbps: 1000, keyintFrames: 60, profile: .high)
        let encoder = try H264Encoder(config: config)
        let pooled = try H264Decoder(), plain = try H264Decoder(unpooledMaxWidth: 4096, maxHeight: 4096)
        var a = VideoFrame(width: 16, height: 16), b = VideoFrame(width: 16, height: 16)
        var identical = 0
        for i in 0..<12 {
            let out = try #require(
                try encoder.encode(
                    Self.movingPatch(width: 320, height: 240, frame: i), pts: Int64(i),
                    forceKeyframe: false))
            let au = try #require(
                H264DecoderTests.annexB(
                    record: encoder.decoderConfigurationRecord, frame: out.data,
                    withParameterSets: i == 0))
            #expect(try pooled.decode(au, into: &a))
            #expect(try plain.decode(au, into: &b))
            if Self.same(a, b) { identical += 1 }
        }
        #expect(identical == 12)
        #expect(pooled.bufferCounts.pictures == 12 && pooled.bufferCounts.layouts == 1)
        #expect(plain.bufferCounts.pictures == 0)
    }

    @Test("a frame bigger than the input buffer replaces it once; a refused frame in between costs no buffer")
    func inputGrowsAndSurvivesGarbage() throws {
        let small = try VP8Encoder(width: 64, height: 48, fps: 30, bitrateKbps: 200)
        let large = try VP8Encoder(width: 320, height: 240, fps: 30, bitrateKbps: 2000)
        let first = try #require(
            try small.encode(TestFrames.quadrants(width: 64, height: 48), pts: 0, forceKeyframe: false).first)
        let second = try #require(
            try large.encode(
                TestFrames.noise(width: 320, height: 240, seed: 3), pts: 0,
                forceKeyframe: false
            ).first)
        try #require(second.data.count > first.data.count * 3 / 2 + 64)
        let decoder = try VP8Decoder()
        var frame = VideoFrame(width: 16, height: 16)
        #expect(try decoder.decode(first.data, into: &frame))
        // Eight bytes fit the first frame's buffer (it holds that frame and 64 bytes of padding).
        #expect(throws: CodecError.self) { _ = try decoder.decode([UInt8](repeating: 0xFF, count: 8), into: &frame) }
        #expect(try decoder.decode(second.data, into: &frame))
        #expect(frame.width == 320 && frame.height == 240)
        #expect(decoder.bufferCounts == DecoderBufferCounts(pictures: 2, layouts: 2, inputs: 2))
    }
}
