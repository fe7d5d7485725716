import Testing
import RTP
@testable import Ingest

@Suite struct ReceptionStatisticsTests {
    static func receive(
        _ s: inout ReceptionStatistics, _ seqs: [UInt16], unwrapper u: inout SequenceUnwrapper,
        startMs: Int64 = 0
    ) {
        for (i, seq) in seqs.enumerated() {
            s.packetReceived(
                extendedSequence: u.unwrap(seq), rtpTimestamp: UInt32(seq) &* 160,
                arrivalMs: startMs + Int64(i) * 20)
        }
    }

    @Test func nothingReceivedGivesAnEmptyReport() {
        var s = ReceptionStatistics(ssrc: 0x1234_5678, clockRate: 8000)
        #expect(s.extendedHighestSequence == nil)
        #expect(s.expected == 0)
        #expect(s.report(nowMs: 5000) == ReceptionReport(ssrc: 0x1234_5678))
    }

    @Test func lossFractionIsFloorOf256LostOverExpectedPerInterval() {
        var s = ReceptionStatistics(ssrc: 7, clockRate: 8000)
        var u = SequenceUnwrapper()
        // 0...19 expected, 3, 9 and 15 lost: floor(256 × 3 / 20) = floor(38.4) = 38.
        Self.receive(&s, (0...19).filter { ![3, 9, 15].contains($0) }, unwrapper: &u)
        let first = s.report(nowMs: 1000)
        #expect(first.fractionLost == 38)
        #expect(first.totalLost == 3)
        #expect(first.extendedHighestSequence == 19)
        // 20...26 expected, 20 and 21 lost: floor(512 / 7) = 73. Cumulative 5.
        Self.receive(&s, [22, 23, 24, 25, 26], unwrapper: &u)
        let second = s.report(nowMs: 2000)
        #expect(second.fractionLost == 73)
        #expect(second.totalLost == 5)
        #expect(s.received == 22)
        #expect(s.expected == 27)
        // Nothing new: no interval, no fraction; the cumulative count stays.
        let third = s.report(nowMs: 3000)
        #expect(third.fractionLost == 0)
        #expect(third.totalLost == 5)
    }

    @Test func duplicatesMakeCumulativeLossNegativeAndFractionZero() {
        var s = ReceptionStatistics(ssrc: 7, clockRate: 8000)
        var u = SequenceUnwrapper()
        Self.receive(&s, [10, 11, 11, 12, 12, 13], unwrapper: &u)
        let r = s.report(nowMs: 0)
        #expect(r.fractionLost == 0)
        #expect(r.totalLost == -2)
        #expect(s.cumulativeLost == -2)
    }

    @Test func lateRetransmissionFillsItsHoleInTheNextInterval() {
        var s = ReceptionStatistics(ssrc: 7, clockRate: 8000)
        var u = SequenceUnwrapper()
        Self.receive(&s, [0, 1, 3], unwrapper: &u)
        #expect(s.report(nowMs: 0).fractionLost == 64)  // 1 of 4
        Self.receive(&s, [2, 4], unwrapper: &u)  // 2 comes back: expected +1, received +2
        let r = s.report(nowMs: 100)
        #expect(r.fractionLost == 0)
        #expect(r.totalLost == 0)
    }

    @Test func extendedHighestSequenceCountsTheWrapCycle() {
        var s = ReceptionStatistics(ssrc: 7, clockRate: 8000)
        var u = SequenceUnwrapper()
        Self.receive(&s, [65533, 65534, 0, 1], unwrapper: &u)  // 65535 lost
        #expect(s.extendedHighestSequence == 65537)
        let r = s.report(nowMs: 0)
        #expect(r.extendedHighestSequence == 0x0001_0001)  // cycles 1, seq 1
        #expect(r.totalLost == 1)
        #expect(r.fractionLost == 51)  // floor(256 / 5)
    }

    @Test func packetFromBeforeTheFirstWidensTheRangeInsteadOfCountingNegative() {
        var s = ReceptionStatistics(ssrc: 7, clockRate: 8000)
        var u = SequenceUnwrapper()
        Self.receive(&s, [0, 65535, 1], unwrapper: &u)
        #expect(s.expected == 3)
        #expect(s.cumulativeLost == 0)
        #expect(s.report(nowMs: 0).extendedHighestSequence == 1)
    }

    @Test func cumulativeLossIsClampedTo24BitsSigned() {
        var s = ReceptionStatistics(ssrc: 7, clockRate: 8000)
        s.packetReceived(extendedSequence: 0, rtpTimestamp: 0, arrivalMs: 0)
        s.packetReceived(extendedSequence: 10_000_000, rtpTimestamp: 0, arrivalMs: 0)
        #expect(s.cumulativeLost == 9_999_999)
        let r = s.report(nowMs: 0)
        #expect(r.totalLost == 0x7F_FFFF)
        #expect(r.fractionLost == 255)  // floor(256 × 9999999 / 10000001) = 255
        #expect(r.extendedHighestSequence == 10_000_000)
    }

    @Test func jitterIsTheA8EstimateTruncatedToWholeUnits() {
        var s = ReceptionStatistics(ssrc: 7, clockRate: 8000)
        // The RFC 3550 A.8 sequence of JitterEstimatorTests: J = 4.541015625.
        for (seq, ts, ms) in [(UInt16(0), UInt32(0), Int64(0)), (1, 160, 20), (2, 320, 45), (3, 480, 60), (4, 640, 80)]
        {
            s.packetReceived(extendedSequence: Int64(seq), rtpTimestamp: ts, arrivalMs: ms)
        }
        #expect(s.jitter == 4.541015625)
        #expect(s.report(nowMs: 100).jitter == 4)
    }

    @Test func lastSenderReportIsTheMiddle32BitsAndDelayIsIn65536thsOfASecond() {
        var s = ReceptionStatistics(ssrc: 7, clockRate: 8000)
        s.packetReceived(extendedSequence: 1, rtpTimestamp: 0, arrivalMs: 0)
        s.senderReportReceived(ntp: 0xE6A1_B2C3_D4E5_F607, arrivalMs: 10_000)
        let r = s.report(nowMs: 11_500)
        #expect(r.lastSenderReport == 0xB2C3_D4E5)
        #expect(r.delaySinceLastSenderReport == 98_304)  // 1.5 s × 65536
        #expect(s.report(nowMs: 10_001).delaySinceLastSenderReport == 65)  // 65.536, truncated
        #expect(s.report(nowMs: 10_000).delaySinceLastSenderReport == 0)
        #expect(s.report(nowMs: 9_000).delaySinceLastSenderReport == 0)  // clock went back: not negative
        // Years without a new SR: capped, not overflowed.
        #expect(s.report(nowMs: 10_000 + 100_000_000).delaySinceLastSenderReport == 4_294_967_230)
        s.senderReportReceived(ntpMiddle: 0x0102_0304, arrivalMs: 20_000)
        let later = s.report(nowMs: 20_125)
        #expect(later.lastSenderReport == 0x0102_0304)
        #expect(later.delaySinceLastSenderReport == 8192)  // 125 ms = 1/8 s
    }

    @Test func restartSequenceCountsAfreshButKeepsTheSenderReport() {
        var s = ReceptionStatistics(ssrc: 7, clockRate: 8000)
        var u = SequenceUnwrapper()
        Self.receive(&s, [100, 102], unwrapper: &u)
        s.senderReportReceived(ntpMiddle: 42, arrivalMs: 0)
        s.restartSequence()
        #expect(s.extendedHighestSequence == nil)
        #expect(s.received == 0)
        var fresh = SequenceUnwrapper()
        Self.receive(&s, [5000, 5001, 5003], unwrapper: &fresh, startMs: 100)
        let r = s.report(nowMs: 1000)
        #expect(r.totalLost == 1)
        #expect(r.fractionLost == 64)
        #expect(r.extendedHighestSequence == 5003)
        #expect(r.lastSenderReport == 42)
    }
}
