import Testing
import TestSupport
import Media
@testable import Codecs

@Suite("H264Decoder")
struct H264DecoderTests {
    /// Annex-B access unit from the encoder's record (SPS, PPS) and one AVCC frame, as a depacketizer would give.
    static func annexB(record: [UInt8], frame: [UInt8], withParameterSets: Bool) -> [UInt8]? {
        guard let nals = H264Units.avcc(frame), let sets = H264Units.parameterSets(record: record) else { return nil }
        return H264Units.annexB((withParameterSets ? [sets.sps, sets.pps] : []) + nals)
    }

    @Test("frames from H264Encoder decode back to the source colours", arguments: [H264Profile.baseline, .high])
    func roundTripThroughEncoder(profile: H264Profile) throws {
        let config = H264EncoderConfig(
            width: 320, height: 240, fps: 30, bitrateKbps: 1000, keyintFrames: 60, profile: profile)
        let encoder = try H264Encoder(config: config)
        let decoder = try H264Decoder()
        var picture = VideoFrame(width: 16, height: 16)
        let source = TestFrames.quadrants(width: 320, height: 240)
        var decoded = 0
        for i in 0..<3 {
            let out = try #require(try encoder.encode(source, pts: Int64(i), forceKeyframe: false))
            let au = try #require(
                Self.annexB(record: encoder.decoderConfigurationRecord, frame: out.data, withParameterSets: i == 0))
            if try decoder.decode(au, into: &picture) { decoded += 1 }
        }
        #expect(decoded == 3)  // low delay: one picture per access unit
        #expect(picture.width == 320 && picture.height == 240)
        for (x, y, color) in [
            (80, 60, TestFrames.red), (240, 60, TestFrames.green), (80, 180, TestFrames.blue),
            (240, 180, TestFrames.white),
        ] {
            let p = picture.pixel(x: x, y: y)
            #expect(
                abs(Int(p.y) - Int(color.y)) <= 3 && abs(Int(p.u) - Int(color.u)) <= 3
                    && abs(Int(p.v) - Int(color.v)) <= 3,
                "\(x),\(y): \(p) vs \(color)")
        }
    }

    @Test("empty and garbage access units produce no picture and never crash")
    func hostileInput() throws {
        let decoder = try H264Decoder()
        var picture = VideoFrame(width: 16, height: 16)
        #expect(throws: CodecError.self) { try decoder.decode([], into: &picture) }
        var random = TestFrames.LCG(seed: 7)
        for _ in 0..<20 {
            var junk: [UInt8] = [0, 0, 0, 1, 0x65]
            for _ in 0..<200 { junk.append(random.next()) }
            // libavcodec may reject the data or skip it; either way there is no picture without an SPS.
            let produced = (try? decoder.decode(junk, into: &picture)) ?? false
            #expect(!produced)
        }
        #expect(picture.width == 16 && picture.height == 16)
    }
}
