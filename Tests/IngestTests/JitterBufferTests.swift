import Testing
import RTP
@testable import Ingest

@Suite struct JitterBufferTests {
    /// 1 timestamp unit per millisecond, so jitter in units is jitter in ms.
    static let delay = AdaptiveDelay(minMs: 20, maxMs: 120, multiplier: 3)

    static func adaptive() -> JitterBuffer { JitterBuffer(adaptive: delay, clockRate: 1000, capacity: 64) }

    @Test func adaptiveTargetIsThreeJittersRoundedUpWithinBounds() {
        let d = Self.delay
        #expect(d.target(jitterMs: 0) == 20)
        #expect(d.target(jitterMs: 6.6) == 20)
        #expect(d.target(jitterMs: 10) == 30)
        #expect(d.target(jitterMs: 10.1) == 31)
        #expect(d.target(jitterMs: 39.9) == 120)
        #expect(d.target(jitterMs: 1e300) == 120)
        #expect(d.target(jitterMs: .infinity) == 120)
        #expect(d.target(jitterMs: .nan) == 20)
        #expect(d.target(jitterMs: 10, allowanceMs: 60) == 90)
        #expect(d.target(jitterMs: 0, allowanceMs: 500) == 120)
        #expect(d.target(jitterMs: 0, allowanceMs: -50) == 20)
    }

    @Test func adaptiveDelayBoundsAreSanitised() {
        let d = AdaptiveDelay(minMs: -10, maxMs: -20)
        #expect(d.minMs == 0)
        #expect(d.maxMs == 0)
        #expect(AdaptiveDelay(minMs: 50, maxMs: 30).maxMs == 50)
        #expect(AdaptiveDelay.video == AdaptiveDelay(minMs: 20, maxMs: 200, multiplier: 3))
        #expect(AdaptiveDelay.audio == AdaptiveDelay(minMs: 20, maxMs: 120, multiplier: 3))
    }

    @Test func depthRisesWithJitterThenFallsBackTowardMin() {
        var b = Self.adaptive()
        #expect(b.currentDelayMs == 20)
        _ = b.insert(rtp(0, ts: 0), nowMs: 0)
        // 320 ms of extra transit: J = 320/16 = 20 → depth 60.
        _ = b.insert(rtp(1, ts: 20), nowMs: 340)
        #expect(b.jitterMs == 20)
        #expect(b.currentDelayMs == 60)
        // On time again: J × 15/16 each packet → 18.75, 17.578125, 16.4794921875.
        var depths: [Int64] = []
        for i in 2...4 {
            _ = b.insert(rtp(UInt16(i), ts: UInt32(i) * 20), nowMs: 340 + Int64(i - 1) * 20)
            depths.append(b.currentDelayMs)
        }
        #expect(depths == [57, 53, 50])
        #expect(b.jitterMs == 16.4794921875)
    }

    @Test func depthIsCappedAtMaxAndReturnsToMin() {
        var b = Self.adaptive()
        _ = b.insert(rtp(0, ts: 0), nowMs: 0)
        _ = b.insert(rtp(1, ts: 20), nowMs: 1620)  // D = 1600: J = 100, 3 × J = 300
        #expect(b.currentDelayMs == 120)
        // J = 100 × (15/16)^n: 3J = 21.28 (depth 22) at n = 41, 19.95 (depth 20) at n = 42.
        var n = 0
        var ms: Int64 = 1620
        var previous = b.currentDelayMs
        while b.currentDelayMs > 20 {
            n += 1
            ms += 20
            _ = b.insert(rtp(UInt16(1 + n), ts: UInt32(1 + n) * 20), nowMs: ms)
            #expect(b.currentDelayMs <= previous)
            previous = b.currentDelayMs
        }
        #expect(n == 42)
        #expect(b.stats.lost == 0)
    }

    @Test func heldGapIsGivenUpAtArrivalPlusTheCurrentDepthAndReportedAsLoss() {
        var b = Self.adaptive()
        #expect(b.insert(rtp(10, ts: 0), nowMs: 0).seqs == [10])
        #expect(b.insert(rtp(12, ts: 40), nowMs: 40).seqs == [])  // 11 missing, J = 0
        #expect(b.nextDeadlineMs == 60)
        #expect(b.drain(nowMs: 59).isEmpty)
        let out = b.drain(nowMs: 60)
        #expect(out.seqs == [12])
        #expect(out.losses == [true])
        #expect(b.stats.lost == 1)
        #expect(b.nextExpectedSequence == 13)
    }

    @Test func latePacketAfterItsGapWasGivenUpIsCountedAndDropped() {
        var b = Self.adaptive()
        _ = b.insert(rtp(10, ts: 0), nowMs: 0)
        _ = b.insert(rtp(12, ts: 40), nowMs: 40)
        #expect(b.drain(nowMs: 60).seqs == [12])
        #expect(b.insert(rtp(11, ts: 20), nowMs: 61).isEmpty)
        #expect(b.insert(rtp(12, ts: 40), nowMs: 62).isEmpty)  // a duplicate, not late
        #expect(b.stats.late == 1)
        #expect(b.stats.duplicates == 1)
        #expect(b.stats.lost == 1)
        #expect(b.stats.received == 4)
    }

    @Test func reordersByExtendedSequenceAcrossTheWrap() {
        var b = JitterBuffer(adaptive: Self.delay, clockRate: 1000)
        #expect(b.insert(rtp(65534, ts: 0), nowMs: 0).seqs == [65534])
        #expect(b.insert(rtp(0, ts: 40), nowMs: 40).seqs == [])
        #expect(b.lastExtendedSequence == 65536)
        #expect(b.heldCount == 1)
        let out = b.insert(rtp(65535, ts: 20), nowMs: 41)
        #expect(out.seqs == [65535, 0])
        #expect(out.losses == [false, false])
        #expect(b.lastExtendedSequence == 65535)
        #expect(b.insert(rtp(1, ts: 60), nowMs: 60).seqs == [1])
        #expect(b.nextExpectedSequence == 65538)
        #expect(b.stats.reordered == 1)
        #expect(b.stats.lost == 0)
    }

    @Test func fixedDepthMeasuresJitterButDoesNotMove() {
        var b = JitterBuffer(fixedDelayMs: 40, clockRate: 1000)
        _ = b.insert(rtp(0, ts: 0), nowMs: 0)
        _ = b.insert(rtp(1, ts: 20), nowMs: 340)
        #expect(b.jitterMs == 20)
        #expect(b.currentDelayMs == 40)
        #expect(b.adaptiveDelay == nil)
        b.setRetransmissionAllowance(100)
        #expect(b.currentDelayMs == 40)
    }

    @Test func retransmissionAllowanceIsAddedToTheAdaptiveDepth() {
        var b = Self.adaptive()
        b.setRetransmissionAllowance(60)
        #expect(b.retransmissionAllowanceMs == 60)
        #expect(b.currentDelayMs == 60)
        _ = b.insert(rtp(0, ts: 0), nowMs: 0)
        _ = b.insert(rtp(1, ts: 20), nowMs: 84)  // D = 64: J = 4 → 12 + 60
        #expect(b.currentDelayMs == 72)
        b.setRetransmissionAllowance(1000)
        #expect(b.currentDelayMs == 120)
        b.setRetransmissionAllowance(-5)
        #expect(b.retransmissionAllowanceMs == 0)
        #expect(b.currentDelayMs == 20)
    }

    @Test func outOfRangePacketDoesNotMoveTheDepth() {
        var b = Self.adaptive()
        _ = b.insert(rtp(100, ts: 0), nowMs: 0)
        _ = b.insert(rtp(101, ts: 20), nowMs: 20)
        // One stray packet far away in sequence and timestamp: dropped, and not jitter.
        #expect(b.insert(rtp(40000, ts: 3_000_000_000), nowMs: 40).isEmpty)
        #expect(b.stats.outOfRange == 1)
        #expect(b.jitterMs == 0)
        #expect(b.currentDelayMs == 20)
        #expect(b.insert(rtp(102, ts: 40), nowMs: 40).seqs == [102])
        #expect(b.jitterMs == 0)
    }

    @Test func senderRestartStartsANewTransitBaseline() {
        var b = Self.adaptive()
        _ = b.insert(rtp(100, ts: 0), nowMs: 0)
        _ = b.insert(rtp(101, ts: 20), nowMs: 36)  // D = 16: J = 1
        #expect(b.jitterMs == 1)
        // The sender restarts with new random sequence and timestamp bases.
        #expect(b.insert(rtp(50000, ts: 2_000_000_000), nowMs: 40).isEmpty)
        let out = b.insert(rtp(50001, ts: 2_000_000_020), nowMs: 60)
        #expect(out.seqs == [50001])
        #expect(out.losses == [true])
        #expect(b.stats.resyncs == 1)
        #expect(b.jitterMs == 1)  // the timestamp jump was not counted as transit change
        _ = b.insert(rtp(50002, ts: 2_000_000_040), nowMs: 80)
        #expect(b.jitterMs == 1 - 1.0 / 16)
        #expect(b.currentDelayMs == 20)
    }
}
