import Testing
import Media
@testable import Codecs

@Suite("VP8")
struct VP8Tests {
    @Test("a solid 320x240 frame survives encode and decode within ±3 per component")
    func roundTrip() throws {
        let color = YUVColor(y: 150, u: 90, v: 200)
        let encoder = try VP8Encoder(width: 320, height: 240, fps: 30, bitrateKbps: 800)
        let packets = try encoder.encode(
            VideoFrame(width: 320, height: 240, color: color), pts: 0, forceKeyframe: false)
        let first = try #require(packets.first)
        #expect(first.isKeyframe)
        // A VP8 keyframe starts with a 3-byte tag (bit 0 clear = key) then the start code 9d 01 2a.
        #expect(first.data[0] & 1 == 0)
        #expect(Array(first.data[3..<6]) == [0x9D, 0x01, 0x2A])

        let decoder = try VP8Decoder()
        var frame = VideoFrame(width: 16, height: 16)
        #expect(try decoder.decode(first.data, into: &frame))
        #expect(frame.width == 320 && frame.height == 240)
        let centre = frame.pixel(x: 160, y: 120)
        #expect(abs(Int(centre.y) - Int(color.y)) <= 3)
        #expect(abs(Int(centre.u) - Int(color.u)) <= 3)
        #expect(abs(Int(centre.v) - Int(color.v)) <= 3)
    }

    @Test("the decoder follows a stream through forced keyframes and keeps inter frames decodable")
    func interFramesAndForcedKeyframe() throws {
        let encoder = try VP8Encoder(width: 160, height: 120, fps: 30, bitrateKbps: 300)
        let decoder = try VP8Decoder()
        var frame = VideoFrame(width: 160, height: 120)
        var keys: [Bool] = []
        for i in 0..<5 {
            let source = TestFrames.quadrants(width: 160, height: 120)
            for packet in try encoder.encode(source, pts: Int64(i), forceKeyframe: i == 3) {
                keys.append(packet.isKeyframe)
                #expect(packet.pts == Int64(i))
                #expect(try decoder.decode(packet.data, into: &frame))
            }
        }
        #expect(keys == [true, false, false, true, false])
        let red = frame.pixel(x: 40, y: 30)
        #expect(abs(Int(red.y) - Int(TestFrames.red.y)) <= 3 && abs(Int(red.v) - Int(TestFrames.red.v)) <= 3)
    }

    @Test("garbage and empty input throw a libavcodec CodecError instead of crashing")
    func hostileInput() throws {
        let decoder = try VP8Decoder()
        var frame = VideoFrame(width: 16, height: 16)
        for bad in [
            [], [0x00, 0x01], [UInt8](repeating: 0xFF, count: 64),
            [0x10, 0x02, 0x00, 0x9D, 0x01, 0x2A, 0xFF, 0x7F, 0xFF, 0x7F],
        ] as [[UInt8]] {
            do {
                _ = try decoder.decode(bad, into: &frame)
                Issue.record("\(bad.count) garbage bytes decoded")
            } catch {
                #expect(error.library == "avcodec")
            }
        }
        #expect(frame.width == 16 && frame.height == 16)
    }

    @Test("a stream larger than the decoder's limit is refused")
    func sizeLimit() throws {
        let encoder = try VP8Encoder(width: 320, height: 240, fps: 30, bitrateKbps: 300)
        let packet = try #require(
            try encoder.encode(VideoFrame(width: 320, height: 240), pts: 0, forceKeyframe: true).first)
        let decoder = try VP8Decoder(maxWidth: 160, maxHeight: 160)
        var frame = VideoFrame(width: 16, height: 16)
        #expect(throws: CodecError.self) { try decoder.decode(packet.data, into: &frame) }
    }
}
