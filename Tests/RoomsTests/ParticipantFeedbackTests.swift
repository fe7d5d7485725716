import Testing
import Logging
import RTP
@testable import Rooms

@Suite struct ParticipantFeedbackTests {
    func participant() throws -> Participant {
        let video = NegotiatedStream(
            kind: .video, ssrc: 0xBEEF, payloadType: 96, clockRate: 90_000, codec: "VP8", srtp: nil)
        let audio = NegotiatedStream(
            kind: .audio, ssrc: 0xA0D1, payloadType: 111, clockRate: 48_000, codec: "opus", srtp: nil)
        return try Participant(
            userId: "u", sessionID: 1, audio: audio, video: video, nowMs: 0, logger: Logger(label: "t"))
    }

    @Test func aJoiningVideoStreamGetsOneKeyframeRequestPer500ms() throws {
        let p = try participant()
        let first = try p.feedback(nowMs: 1000, serverSSRC: 7, reportDue: false)
        #expect(
            first == [
                .receiverReport(ReceiverReport(ssrc: 7)), .pli(PictureLossIndication(senderSSRC: 7, mediaSSRC: 0xBEEF)),
            ])
        #expect(try p.feedback(nowMs: 1200, serverSSRC: 7, reportDue: false).isEmpty)
        #expect(try p.feedback(nowMs: 1500, serverSSRC: 7, reportDue: false).count == 2)
    }

    @Test func aDueReportCarriesABlockPerStream() throws {
        let p = try participant()
        let packets = try p.feedback(nowMs: 1000, serverSSRC: 7, reportDue: true)
        guard case .receiverReport(let rr)? = packets.first else {
            Issue.record("no RR first")
            return
        }
        #expect(rr.ssrc == 7)
        #expect(rr.reports.map(\.ssrc) == [0xA0D1, 0xBEEF])
    }

    @Test func lostVideoPacketsAreNacked() throws {
        let p = try participant()
        _ = try p.feedback(nowMs: 0, serverSSRC: 7, reportDue: false)
        for seq: UInt16 in [10, 11, 14] {
            p.receive(
                RTPPacket(
                    marker: false, payloadType: 96, sequenceNumber: seq, timestamp: 3000, ssrc: 0xBEEF,
                    payload: [0x90, 0x80, 0x01, 0x00]),
                bytes: 100, nowMs: 10)
        }
        let nacks = try p.feedback(nowMs: 25, serverSSRC: 7, reportDue: false).compactMap { packet -> [UInt16]? in
            if case .nack(let n) = packet { return n.lostSequenceNumbers } else { return nil }
        }
        #expect(nacks == [[12, 13]])
    }
}
