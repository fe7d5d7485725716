import Testing
@testable import RTP

/// Hostile-input sweep: fixed-seed random and mutated-valid inputs through every parser.
/// A crash fails the run; the counters prove both the accept and the reject paths were exercised.
@Suite struct RandomInputTests {
    static let seeds: [[UInt8]] = {
        var s = vp8CapturedPackets.prefix(8).map { hex($0) } + opusCapturedPackets.map { hex($0) }
        s.append(RTPPacketTests.full)
        s.append(RTCPSenderReportTests.withBlock + RTCPCompoundTests.sdes + hex("81cb0002 12345678 03627965"))
        s.append(RTCPReceiverReportTests.golden + RTCPPictureLossIndicationTests.golden)
        return s
    }()

    /// Random bytes half the time, otherwise a valid datagram with a few bytes changed, cut or extended.
    static func input(_ rng: inout SplitMix64) -> [UInt8] {
        if Bool.random(using: &rng) {
            let length = Int.random(in: 0...(Int.random(in: 0...9, using: &rng) == 0 ? 400 : 40), using: &rng)
            return (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
        }
        var bytes = seeds.randomElement(using: &rng)!
        for _ in 0..<Int.random(in: 1...4, using: &rng) {
            switch Int.random(in: 0...3, using: &rng) {
            case 0 where !bytes.isEmpty:
                bytes[Int.random(in: 0..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
            case 1 where !bytes.isEmpty:
                bytes.removeLast(Int.random(in: 0...bytes.count, using: &rng))
            case 2:
                bytes.append(UInt8.random(in: 0...255, using: &rng))
            default:
                if bytes.count > 1 { bytes[1] = UInt8.random(in: 0...255, using: &rng) }
            }
        }
        return bytes
    }

    @Test func binaryParsersSurviveRandomInput() {
        var rng = SplitMix64(seed: 0xC0_40_57)
        var rtpOK = 0, rtpFailed = 0, roundTripMismatches = 0
        var rtcpOK = 0, rtcpFailed = 0, vp8OK = 0, vp8Failed = 0, frames = 0
        var depacketizer = VP8Depacketizer(maxFrameBytes: 16 * 1024)
        for _ in 0..<200_000 {
            let bytes = Self.input(&rng)
            _ = classifyPacket(bytes)
            if let packet = try? RTPPacket(bytes: bytes) {
                rtpOK += 1
                if (try? RTPPacket(bytes: packet.serialized())) != packet { roundTripMismatches += 1 }
                var p = packet
                p.timestamp = UInt32.random(in: 0...3, using: &rng)
                if let f = depacketizer.push(p, afterLoss: Int.random(in: 0...20, using: &rng) == 0) {
                    frames += 1
                    #expect(f.data.count <= 16 * 1024)
                }
                while depacketizer.takeReadyFrame() != nil { frames += 1 }
            } else {
                rtpFailed += 1
            }
            if (try? parseCompoundRTCP(bytes)) != nil { rtcpOK += 1 } else { rtcpFailed += 1 }
            if let d = try? VP8PayloadDescriptor(payload: bytes) {
                vp8OK += 1
                #expect(d.headerLength < bytes.count)
            } else {
                vp8Failed += 1
            }
        }
        #expect(roundTripMismatches == 0)
        #expect(rtpOK > 10_000 && rtpFailed > 10_000)
        #expect(rtcpOK > 1_000 && rtcpFailed > 10_000)
        #expect(vp8OK > 10_000 && vp8Failed > 1_000)
        #expect(frames > 100)
    }

    @Test func sdpParserSurvivesRandomInput() {
        var rng = SplitMix64(seed: 0x5D9)
        let offers = [SessionDescriptionTests.designOffer, SessionDescriptionTests.srtpOffer].map { Array($0.utf8) }
        let alphabet = Array("v=0\r\nmoa:/ 0123456789RTP/AVPSavpfvideoaudiortpmapfmtpssrccrypto inline|-;".utf8)
        var parsed = 0, refused = 0
        for i in 0..<60_000 {  // SDP texts are ~50x longer than the binary inputs
            var bytes: [UInt8]
            switch i % 3 {
            case 0:  // any bytes, invalid UTF-8 included
                bytes = (0..<Int.random(in: 0...80, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            case 1:  // SDP-looking noise
                bytes = [0x76, 0x3D, 0x30, 0x0A]
                    + (0..<Int.random(in: 0...120, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! }
            default:  // a valid offer with a few bytes changed or cut
                bytes = offers.randomElement(using: &rng)!
                for _ in 0..<Int.random(in: 1...3, using: &rng) {
                    let at = Int.random(in: 0..<bytes.count, using: &rng)
                    if Bool.random(using: &rng) {
                        bytes[at] = alphabet.randomElement(using: &rng)!
                    } else {
                        bytes.removeSubrange(at..<min(bytes.count, at + Int.random(in: 1...8, using: &rng)))
                    }
                }
            }
            let text = String(decoding: bytes, as: UTF8.self)
            if let sdp = try? SessionDescription.parse(text) {
                parsed += 1
                _ = makeAnswer(offer: sdp, address: "127.0.0.1", port: 9, media: [], sessionId: 1)
            } else {
                refused += 1
            }
        }
        #expect(parsed > 3_000 && refused > 3_000)
    }
}
