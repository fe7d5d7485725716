import TestSupport
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
                bytes =
                    [0x76, 0x3D, 0x30, 0x0A]
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
    // MARK: Feedback, SDES and H.264

    /// Whole packets of the newer RTCP types, alone and inside compound datagrams, to mutate.
    static let rtcpSeeds: [[UInt8]] = [
        RTCPGenericNACKTests.golden, RTCPFullIntraRequestTests.golden, RTCPSourceDescriptionTests.golden,
        RTCPReceiverEstimatedMaximumBitrateTests.golden, RTCPPictureLossIndicationTests.golden,
        hex("8fce0003 00000001 00000000 41424344"),  // application feedback that is not REMB
        hex("81ca0003 000004d2 01026162 00000000"), RTCPReceiverReportTests.golden,
    ]

    /// The bytes with one to three changes; `hot` leading bytes (headers, counts, sizes: where parsers
    /// decide) are picked out more often than the rest.
    static func mutated(_ seed: [UInt8], hot: Int, _ rng: inout SplitMix64) -> [UInt8] {
        var bytes = seed
        for _ in 0..<Int.random(in: 1...3, using: &rng) {
            let any = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &rng)
            switch Int.random(in: 0...4, using: &rng) {
            case 0 where !bytes.isEmpty:
                bytes[any] = UInt8.random(in: 0...255, using: &rng)
            case 1 where !bytes.isEmpty:
                bytes[Int.random(in: 0..<min(hot, bytes.count), using: &rng)] = UInt8.random(in: 0...255, using: &rng)
            case 2 where !bytes.isEmpty:
                bytes[any] ^= 1 << UInt8.random(in: 0...7, using: &rng)
            case 3 where !bytes.isEmpty:
                bytes.removeLast(Int.random(in: 1...bytes.count, using: &rng))
            default:
                bytes += (0..<Int.random(in: 1...8, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            }
        }
        return bytes
    }

    @Test func feedbackAndSourceDescriptionParsersSurviveRandomInput() {
        var rng = SplitMix64(seed: 0xFEED_BAC4)
        var parsed = 0, refused = 0, grew = 0, unstable = 0
        var nacks = 0, firs = 0, rembs = 0, sdes = 0, others = 0, typedParses = 0
        for i in 0..<20_000 {
            var bytes: [UInt8]
            if i % 5 == 0 {  // noise with a version-2 first byte, so the header check is not all that runs
                bytes = (0..<Int.random(in: 4...80, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
                bytes[0] = 0x80 | bytes[0] & 0x3F
            } else {  // one to three valid packets, one of them mutated
                var packets = (0..<Int.random(in: 1...3, using: &rng)).map { _ in
                    Self.rtcpSeeds.randomElement(using: &rng)!
                }
                let victim = Int.random(in: 0..<packets.count, using: &rng)
                packets[victim] = Self.mutated(packets[victim], hot: 24, &rng)
                bytes = packets.flatMap { $0 }
            }
            // The typed parsers read one packet and ignore what follows; what they accept writes back no larger.
            let typed: [[UInt8]?] = [
                (try? GenericNACK(bytes: bytes))?.serialized(), (try? FullIntraRequest(bytes: bytes))?.serialized(),
                (try? SourceDescription(bytes: bytes))?.serialized(),
                (try? ReceiverEstimatedMaximumBitrate(bytes: bytes))?.serialized(),
            ]
            for case let out? in typed {
                typedParses += 1
                if out.count > bytes.count { grew += 1 }
            }
            guard let packets = try? parseCompoundRTCP(bytes) else {
                refused += 1
                continue
            }
            parsed += 1
            let written = serializeCompoundRTCP(packets)
            if written.count > bytes.count { grew += 1 }
            if (try? parseCompoundRTCP(written)) != packets { unstable += 1 }
            for packet in packets {
                switch packet {
                case .nack: nacks += 1
                case .fir: firs += 1
                case .remb: rembs += 1
                case .sourceDescription: sdes += 1
                case .other: others += 1
                default: break
                }
            }
        }
        #expect(grew == 0)
        #expect(unstable == 0)
        #expect(parsed > 2_500 && refused > 7_500)
        #expect(nacks > 500 && firs > 500 && rembs > 500 && sdes > 1_000 && others > 800)
        #expect(typedParses > 3_500)
    }

    /// One access unit of real NAL units, packetized as a sender might: single NAL units, STAP-A, or
    /// FU-A pieces cut at random places.
    static func h264Payloads(_ rng: inout SplitMix64) -> [[UInt8]] {
        typealias F = H264Fixture
        if Int.random(in: 0...3, using: &rng) == 0 { return [F.stapA] }
        var units = Bool.random(using: &rng) ? [F.sps, F.pps, F.idr] : [F.pSlice]
        var payloads: [[UInt8]] = []
        if units.count == 3 && Bool.random(using: &rng) {
            payloads.append(F.parameterSets)
            units.removeFirst(2)
        }
        for unit in units {
            guard unit.count > 40, Bool.random(using: &rng) else {
                payloads.append(unit)
                continue
            }
            let body = Array(unit.dropFirst())
            let cuts = Set(
                (0..<Int.random(in: 1...4, using: &rng)).map { _ in
                    Int.random(in: 1..<body.count, using: &rng)
                })
            let bounds = [0] + cuts.sorted() + [body.count]
            for piece in 0..<bounds.count - 1 {
                let header = (piece == 0 ? 0x80 : 0) | (piece == bounds.count - 2 ? 0x40 : 0) | unit[0] & 0x1F
                payloads.append([unit[0] & 0xE0 | H264Payload.fuA, header] + body[bounds[piece]..<bounds[piece + 1]])
            }
        }
        return payloads
    }

    @Test func h264DepacketizerSurvivesRandomAndMutatedPackets() {
        var rng = SplitMix64(seed: 0x0264)
        let maxBytes = 1000, maxUnits = 4  // a keyframe is 502 bytes in 3 NAL units
        var small = H264Depacketizer(maxAccessUnitBytes: maxBytes, maxNALUnits: maxUnits)
        var plain = H264Depacketizer()
        var timestamp: UInt32 = 0
        var smallBudget = 0, plainBudget = 0, packets = 0, frames = 0, keyframes = 0
        var payloadsParsed = 0, payloadsRefused = 0
        var lost = false

        /// Every frame is Annex-B, within the limits, and no larger than what the packets pushed since the
        /// last frame came out can expand to: n payload bytes give at most 2n + 4 (a single NAL unit gains a
        /// 4-byte start code; a STAP-A of 1-byte units turns every 3 bytes into 5).
        func check(_ emitted: [EncodedFrame], limit: Int, budget: Int) {
            #expect(emitted.reduce(0) { $0 + $1.data.count } <= budget)
            for frame in emitted {
                frames += 1
                #expect(frame.data.count <= limit)
                #expect(frame.data.starts(with: [0, 0, 0, 1]))
                if frame.isKeyframe {
                    keyframes += 1
                    let idr = frame.data.indices.dropLast(4).contains {
                        frame.data[$0..<$0 + 4].elementsEqual([0, 0, 0, 1]) && frame.data[$0 + 4] & 0x1F == 5
                    }
                    #expect(idr)
                }
            }
        }

        for unit in 0..<20_000 {
            timestamp &+= UInt32.random(in: 0...3, using: &rng) == 0 ? 0 : 18_000  // sometimes a repeated timestamp
            var payloads =
                unit % 10 == 9
                ? (0..<Int.random(in: 1...4, using: &rng)).map { _ in  // noise
                    (0..<Int.random(in: 0...40, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
                }
                : Self.h264Payloads(&rng)
            for i in payloads.indices where Int.random(in: 0..<12, using: &rng) == 0 {
                payloads[i] = Self.mutated(payloads[i], hot: 4, &rng)
            }
            for (i, payload) in payloads.enumerated() {
                if Int.random(in: 0..<30, using: &rng) == 0 {
                    lost = true
                    continue
                }
                let last = i == payloads.count - 1
                let marker = Int.random(in: 0..<10, using: &rng) == 0 ? !last : last  // lost or extra markers
                let packet = RTPPacket(
                    marker: marker, payloadType: 102,
                    sequenceNumber: UInt16(truncatingIfNeeded: packets), timestamp: timestamp,
                    ssrc: 1, payload: payload)
                packets += 1
                if let structure = try? H264Payload(payload: payload) {
                    payloadsParsed += 1
                    switch structure {
                    case .single: break
                    case .aggregation(let units):
                        #expect(units.allSatisfy { !$0.isEmpty && $0.lowerBound >= 3 })
                        #expect(units.allSatisfy { $0.upperBound <= payload.count })
                    case .fragment(let f):
                        #expect(f.data.lowerBound == 2 && f.data.upperBound == payload.count)
                    }
                } else {
                    payloadsRefused += 1
                }
                // The packet may belong to the unit a frame is closed for, or open the next: count it in both.
                let cost = 2 * payload.count + 4
                smallBudget += cost
                plainBudget += cost
                var out = [small.push(packet, afterLoss: lost)].compactMap { $0 }
                while let f = small.takeReadyFrame() { out.append(f) }
                check(out, limit: maxBytes, budget: smallBudget)
                if !out.isEmpty { smallBudget = cost }
                out = [plain.push(packet, afterLoss: lost)].compactMap { $0 }
                while let f = plain.takeReadyFrame() { out.append(f) }
                check(out, limit: H264Depacketizer.defaultMaxAccessUnitBytes, budget: plainBudget)
                if !out.isEmpty { plainBudget = cost }
                lost = false
            }
        }
        #expect(frames > 15_000 && keyframes > 8_000)
        #expect(small.droppedFrames > 3_000 && small.droppedPackets > 1_000)
        // Units merged by a lost marker and a repeated timestamp reach the small depacketizer's limits.
        #expect(small.droppedFrames > plain.droppedFrames + 50)
        #expect(payloadsParsed > 20_000 && payloadsRefused > 1_000)
    }
}
