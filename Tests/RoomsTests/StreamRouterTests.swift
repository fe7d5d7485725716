import Testing
import Logging
import RTP
import SRTP
@testable import Rooms

/// Who may speak for a plain-RTP source: RTP latches the first address; RTCP must come from that host.
@Suite struct StreamRouterTests {
    static let sender = PeerAddress(host: "192.0.2.10", port: 40000)
    static let senderRTCP = PeerAddress(host: "192.0.2.10", port: 40001)
    static let stranger = PeerAddress(host: "198.51.100.7", port: 40001)
    static let bye = serializeCompoundRTCP([.bye(Goodbye(sources: [0xA0D1]))])
    static let rtp = RTPPacket(payloadType: 111, sequenceNumber: 1, timestamp: 960, ssrc: 0xA0D1, payload: [0xF8])
        .serialized()

    func router() throws -> (StreamRouter, Participant) {
        let audio = NegotiatedStream(
            kind: .audio, ssrc: 0xA0D1, payloadType: 111, clockRate: 48_000, codec: "opus", srtp: nil)
        let participant = try Participant(
            userId: "u", sessionID: 1, audio: audio, video: nil, nowMs: 0, logger: Logger(label: "t"))
        let router = StreamRouter()
        #expect(router.register([.init(ssrc: 0xA0D1)], room: "r", participant: participant) == nil)
        return (router, participant)
    }

    @Test func plainRTCPBeforeTheFirstRTPPacketIsDropped() throws {
        let (router, _) = try router()
        guard case .dropped = router.route(Self.bye, from: Self.sender) else {
            Issue.record("BYE accepted before latching")
            return
        }
        #expect(router.snapshot.wrongSource == 1)
    }

    @Test func plainRTCPFromAnotherHostIsDroppedAndCounted() throws {
        let (router, _) = try router()
        guard case .rtp = router.route(Self.rtp, from: Self.sender) else {
            Issue.record("RTP not routed")
            return
        }
        guard case .dropped = router.route(Self.bye, from: Self.stranger) else {
            Issue.record("spoofed BYE accepted")
            return
        }
        #expect(router.snapshot.wrongSource == 1)
        var scratch: [UInt8] = []
        #expect(router.protectFeedback([1, 2, 3], about: 0xA0D1, into: &scratch)?.to == Self.sender)
    }

    @Test func plainRTCPFromTheLatchedHostOnAnotherPortIsAcceptedAndGetsTheFeedback() throws {
        let (router, participant) = try router()
        _ = router.route(Self.rtp, from: Self.sender)
        guard case .rtcp(let owner, let packets) = router.route(Self.bye, from: Self.senderRTCP) else {
            Issue.record("RTCP from the sender's RTCP port dropped")
            return
        }
        #expect(owner === participant)
        #expect(packets == [.bye(Goodbye(sources: [0xA0D1]))])
        #expect(router.snapshot.wrongSource == 0)
        var scratch: [UInt8] = []
        let route = router.protectFeedback([1, 2, 3], about: 0xA0D1, into: &scratch)
        #expect(route?.to == Self.senderRTCP && route?.protected == false && scratch.isEmpty)
    }

    @Test func srtpFeedbackIsProtectedIntoTheScratchAndTheParticipantsKeyOpensIt() throws {
        let key = (0..<30).map { UInt8(0x40 + $0) }
        let audio = NegotiatedStream(
            kind: .audio, ssrc: 0xA0D1, payloadType: 111, clockRate: 48_000, codec: "opus", srtp: nil)
        let participant = try Participant(
            userId: "u", sessionID: 1, audio: audio, video: nil, nowMs: 0, logger: Logger(label: "t"))
        let router = StreamRouter()
        let inbound = try SRTPSession(profile: .aesCm128HmacSha1_80, masterKeyAndSalt: key, direction: .inbound)
        let outbound = try SRTPSession(profile: .aesCm128HmacSha1_80, masterKeyAndSalt: key, direction: .outbound)
        #expect(
            router.register(
                [.init(ssrc: 0xA0D1, inbound: inbound, outbound: outbound)], room: "r", participant: participant) == nil
        )
        let sender = try SRTPSession(profile: .aesCm128HmacSha1_80, masterKeyAndSalt: key, direction: .outbound)
        guard case .rtp = router.route(try sender.protectRTP(Self.rtp), from: Self.sender) else {
            Issue.record("SRTP not routed")
            return
        }
        let compound = serializeCompoundRTCP([
            .receiverReport(ReceiverReport(ssrc: 7)),
            .pli(PictureLossIndication(senderSSRC: 7, mediaSSRC: 0xA0D1)),
        ])
        var scratch: [UInt8] = []
        let route = try #require(router.protectFeedback(compound, about: 0xA0D1, into: &scratch))
        #expect(route.to == Self.sender && route.protected)
        #expect(scratch.count == compound.count + 4 + 10)  // E-flag/index word and the 80-bit tag
        let participantSide = try SRTPSession(profile: .aesCm128HmacSha1_80, masterKeyAndSalt: key, direction: .inbound)
        #expect(try participantSide.unprotectRTCP(scratch) == compound)
        // The next report reuses the buffer.
        let capacity = scratch.capacity
        _ = router.protectFeedback(compound, about: 0xA0D1, into: &scratch)
        #expect(scratch.capacity == capacity)
    }
}
