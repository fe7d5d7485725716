import Foundation
import Logging
import Media
import RTP
import Synchronization
import Testing
@testable import Rooms

/// The room view, driven canvas by canvas: one encode per codec, each receiver on its own numbers, NACKs answered
/// from the history, keyframes at most every 500 ms, the bitrate within what receivers report.
@Suite struct RoomViewSenderTests {
    final class Wire: Sendable {
        let sent = Mutex<[String: [RTPPacket]]>([:])
        func record(_ user: String, _ bytes: [UInt8]) {
            guard !(192...223).contains(bytes[1]), let p = try? RTPPacket(bytes: bytes) else { return }
            sent.withLock { $0[user, default: []].append(p) }
        }
        func rtp(_ user: String) -> [RTPPacket] { sent.withLock { $0[user] ?? [] } }
    }

    let wire = Wire()
    let sender: RoomViewSender
    var canvas = VideoFrame(width: 320, height: 180)

    init() {
        let wire = self.wire
        sender = RoomViewSender(
            settings: RoomConfig.ReturnVideo(width: 160, height: 90, fps: 15, bitrate: 400), canvasFps: 30,
            transport: { p, _, bytes in wire.record(p.userId, bytes) }, logger: Logger(label: "t"))
    }

    func viewer(_ user: String, codec: String = "VP8", ssrc: UInt32) throws -> Participant {
        try Participant(
            userId: user, sessionID: Int(ssrc), audio: nil, video: nil,
            returnVideo: ReturnOffer(
                kind: .video, payloadType: codec == "VP8" ? 96 : 102, codec: codec, channels: 1, ssrc: ssrc, srtp: nil,
                receiverSSRC: nil, receiverSRTP: nil),
            nowMs: 0, logger: Logger(label: "t"))
    }

    /// Canvases `range` at 30 fps (each a little different, so frames are not empty).
    mutating func run(_ range: Range<Int>, _ present: [Participant], before: (Int) -> Void = { _ in }) {
        for index in range {
            before(index)
            for i in 0..<canvas.y.count where i % 97 == index % 97 { canvas.y[i] &+= 17 }
            sender.tick(
                canvas: canvas, index: Int64(index), present: present, nowMs: Int64(index) * 1000 / 30,
                reportDue: index % 30 == 0)
        }
    }

    /// Whether an RTP packet starts a VP8 keyframe (S bit, partition 0, and the frame's P bit clear).
    static func startsKeyframe(_ p: RTPPacket) -> Bool {
        guard let d = try? VP8PayloadDescriptor(payload: p.payload), d.startsFrame else { return false }
        return p.payload[d.headerLength] & 0x01 == 0
    }

    @Test mutating func receiversOfOneCodecGetTheSamePayloadsOnTheirOwnNumbersAtTheViewRate() throws {
        let a = try viewer("a", ssrc: 500), b = try viewer("b", ssrc: 501)
        run(0..<60, [a, b])
        #expect(sender.frames(.vp8) == 30)  // 2 s of a 15 fps view
        #expect(sender.frames(.h264) == 0)
        let pa = wire.rtp("a"), pb = wire.rtp("b")
        #expect(pa.count >= 30 && pa.map(\.payload) == pb.map(\.payload))
        #expect(pa.allSatisfy { $0.ssrc == 500 } && pb.allSatisfy { $0.ssrc == 501 })
        #expect(Self.startsKeyframe(pa[0]))
        for (x, y) in zip(pa, pa.dropFirst()) { #expect(y.sequenceNumber == x.sequenceNumber &+ 1) }
        // 90 kHz, one frame every other canvas: 6000 apart.
        let stamps = pa.filter(\.marker).map(\.timestamp)
        for (x, y) in zip(stamps, stamps.dropFirst()) { #expect(y &- x == 6000) }
    }

    @Test mutating func aLateReceiverStartsAtAKeyframeAndRequestsAreAnsweredAtMostEveryHalfSecond() throws {
        let a = try viewer("a", ssrc: 500), b = try viewer("b", ssrc: 501)
        run(0..<10, [a])
        // b arrives 333 ms in: its keyframe waits for 500 ms after the first one (canvas 16, a 15 fps slot).
        run(10..<90, [a, b]) { index in a.noteViewFeedback(.pli(PictureLossIndication(senderSSRC: 1, mediaSSRC: 500))) }
        let first = try #require(wire.rtp("b").first)
        #expect(Self.startsKeyframe(first))
        #expect(first.timestamp == UInt32(truncatingIfNeeded: 16 * 3000) &+ b.returnVideo!.rtp.timestampBase)
        // a asks for a keyframe at every canvas: 90 canvases (3 s) hold at most 6.
        let keyframes = wire.rtp("a").filter(Self.startsKeyframe).count
        #expect(keyframes == 6, "\(keyframes)")
    }

    @Test mutating func aNackIsAnsweredFromTheHistoryWithTheReceiversOwnNumbers() throws {
        let a = try viewer("a", ssrc: 500)
        run(0..<20, [a])
        let sent = wire.rtp("a")
        let lost = sent[3]
        a.noteViewFeedback(
            .nack(GenericNACK(senderSSRC: 1, mediaSSRC: 500, lostSequenceNumbers: [lost.sequenceNumber])))
        // A number never sent (far ahead) is counted, not answered.
        a.noteViewFeedback(
            .nack(GenericNACK(senderSSRC: 1, mediaSSRC: 500, lostSequenceNumbers: [lost.sequenceNumber &- 1000])))
        run(20..<21, [a])
        let again = wire.rtp("a").filter { $0.sequenceNumber == lost.sequenceNumber }
        #expect(again.count == 2)
        #expect(again.last == lost)
        #expect(a.returnVideo?.retransmissions.answered == 1 && a.returnVideo?.retransmissions.unanswerable == 1)
    }

    @Test mutating func aReceiverNackingEverythingGetsAtMostTwoHundredResendsASecond() throws {
        let a = try viewer("a", ssrc: 500)
        run(0..<31, [a])
        let newest = try #require(wire.rtp("a").last?.sequenceNumber)
        let sent = wire.rtp("a").count
        // 256 numbers a canvas (all held, most of them many times over) for 1 s.
        run(31..<61, [a]) { _ in
            a.noteViewFeedback(
                .nack(
                    GenericNACK(
                        senderSSRC: 1, mediaSSRC: 500,
                        lostSequenceNumbers: (0..<256).map { newest &- UInt16($0 % 20) })))
        }
        // The resends are the packets numbered at or before the newest one sent before the NACKs.
        let resent = wire.rtp("a").dropFirst(sent).filter { Int16(bitPattern: $0.sequenceNumber &- newest) <= 0 }.count
        #expect(a.returnVideo?.retransmissions.answered == 200)
        #expect(resent == 200)
    }

    @Test mutating func theBitrateStaysWithinTheReceiversREMBAndBacksOffUnderLossDownToAFloor() throws {
        let a = try viewer("a", ssrc: 500), h = try viewer("h", codec: "H264", ssrc: 502)
        run(0..<2, [a, h])
        #expect(sender.targetKbps(.vp8) == 400 && sender.targetKbps(.h264) == 400)
        a.noteViewFeedback(.remb(ReceiverEstimatedMaximumBitrate(senderSSRC: 1, bitrate: 300_000, ssrcs: [500])))
        run(2..<31, [a, h])  // canvas 30: a report is due
        #expect(sender.targetKbps(.vp8) == 300)
        #expect(sender.targetKbps(.h264) == 400)  // the other codec's receivers did not ask
        // 40 % loss reported: down by 20 % a second, to the floor.
        for second in 1...6 {
            a.noteReceptionReports(
                [ReceptionReport(ssrc: 500, fractionLost: 102)], nowMs: Int64(second) * 1000, ntpNow: 0)
            run((second * 30 + 1)..<(second * 30 + 31), [a, h])
        }
        #expect(sender.targetKbps(.vp8) == 150)
        #expect(sender.frames(.h264) == sender.frames(.vp8))
    }

    @Test mutating func nothingIsEncodedWhileNobodyReceivesTheView() throws {
        let listener = try Participant(
            userId: "l", sessionID: 1, audio: nil, video: nil, nowMs: 0, logger: Logger(label: "t"))
        run(0..<30, [listener])
        #expect(sender.frames(.vp8) == 0 && sender.frames(.h264) == 0)
        #expect(sender.targetKbps(.vp8) == nil)
    }
}
