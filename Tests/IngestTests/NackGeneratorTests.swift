import Testing
@testable import Ingest

@Suite struct NackGeneratorTests {
    /// First NACK 10 ms after the gap, repeats every 50 ms, 3 at most, useless after 400 ms.
    static func generator() -> NackGenerator { NackGenerator(configuration: NackConfiguration()) }

    @Test func firstRequestWaitsTheInitialDelay() {
        var g = Self.generator()
        g.packetReceived(extendedSequence: 100, nowMs: 0)
        g.packetReceived(extendedSequence: 103, nowMs: 20)
        #expect(g.missingSequences == [101, 102])
        #expect(g.poll(nowMs: 29) == [])
        #expect(g.poll(nowMs: 30) == [101, 102])
        #expect(g.stats.requested == 2)
    }

    @Test func repeatIsNotSentBeforeTheRoundTripHasPassedAndStopsAtTheRetryLimit() {
        var g = Self.generator()
        g.packetReceived(extendedSequence: 1, nowMs: 0)
        g.packetReceived(extendedSequence: 3, nowMs: 0)
        var sent: [Int64] = []
        for ms in stride(from: Int64(0), through: 390, by: 1) where g.poll(nowMs: ms) == [2] { sent.append(ms) }
        #expect(sent == [10, 60, 110])  // initial delay, then one RTT apart, 3 requests in all
        #expect(g.stats.requested == 3)
        #expect(g.missingSequences == [2])  // still tracked: an answer may yet come
        g.packetReceived(extendedSequence: 2, nowMs: 391)
        #expect(g.stats.recovered == 1)
        #expect(g.missingSequences == [])
    }

    @Test func anAnswerToASingleNackIsTimedAndSmoothedIntoTheRoundTrip() {
        var g = Self.generator()
        g.packetReceived(extendedSequence: 1, nowMs: 0)
        g.packetReceived(extendedSequence: 4, nowMs: 0)
        #expect(g.poll(nowMs: 10) == [2, 3])
        #expect(g.isAwaitingRetransmission(sequence: 2))
        #expect(!g.isAwaitingRetransmission(sequence: 4))  // received
        #expect(!g.isAwaitingRetransmission(sequence: 5))  // not seen yet: ahead, not a gap
        g.packetReceived(extendedSequence: 2, nowMs: 90)
        #expect(g.measuredRttMs == 80)
        #expect(g.rttMs == 80)
        #expect(!g.isAwaitingRetransmission(sequence: 2))
        g.packetReceived(extendedSequence: 3, nowMs: 50)
        #expect(g.measuredRttMs == 75)  // (7 × 80 + 40) / 8
        #expect(g.stats.roundTripSamples == 2)
    }

    @Test func anAnswerAfterARepeatIsNotTimedKarnsRule() {
        var g = Self.generator()
        g.packetReceived(extendedSequence: 1, nowMs: 0)
        g.packetReceived(extendedSequence: 3, nowMs: 0)
        #expect(g.poll(nowMs: 10) == [2])
        #expect(g.poll(nowMs: 60) == [2])
        g.packetReceived(extendedSequence: 2, nowMs: 65)
        #expect(g.stats.recovered == 1)
        #expect(g.measuredRttMs == nil)
        #expect(g.rttMs == 50)
    }

    @Test func aSequenceWrapStillFindsTheNackedGap() {
        var g = Self.generator()
        g.packetReceived(extendedSequence: 65_534, nowMs: 0)
        g.packetReceived(extendedSequence: 65_537, nowMs: 0)  // 65535 and 0 (65536) missing
        _ = g.poll(nowMs: 10)
        #expect(g.isAwaitingRetransmission(sequence: 0))
        #expect(g.isAwaitingRetransmission(sequence: 65_535))
        #expect(!g.isAwaitingRetransmission(sequence: 1))
    }

    @Test func measuredRoundTripSetsTheRepeatSpacing() {
        var g = Self.generator()
        g.rttMs = 30
        g.packetReceived(extendedSequence: 1, nowMs: 0)
        g.packetReceived(extendedSequence: 3, nowMs: 0)
        #expect(g.poll(nowMs: 10) == [2])
        #expect(g.poll(nowMs: 39) == [])
        #expect(g.poll(nowMs: 40) == [2])
    }

    @Test func packetTooOldToBeUsefulIsGivenUp() {
        var g = Self.generator()
        g.packetReceived(extendedSequence: 1, nowMs: 0)
        g.packetReceived(extendedSequence: 3, nowMs: 0)
        #expect(g.poll(nowMs: 349) == [2])  // answered around 399: just in time
        #expect(g.poll(nowMs: 399) == [])  // a repeat is due, but its answer would come at 449
        #expect(g.missingSequences == [2])
        #expect(g.poll(nowMs: 400) == [])
        #expect(g.missingSequences == [])
        #expect(g.stats.expired == 1)
        g.packetReceived(extendedSequence: 2, nowMs: 401)  // far too late: nothing to recover
        #expect(g.stats.recovered == 0)
    }

    @Test func noRequestWhoseAnswerWouldArriveAfterTheDeadline() {
        var g = Self.generator()
        g.maxAgeMs = 100  // the jitter buffer waits 100 ms for a gap
        g.packetReceived(extendedSequence: 1, nowMs: 0)
        g.packetReceived(extendedSequence: 3, nowMs: 0)
        #expect(g.poll(nowMs: 10) == [2])  // answered around 60 < 100
        #expect(g.poll(nowMs: 60) == [])  // answered around 110: the buffer gave up at 100
        #expect(g.missingSequences == [2])  // the first request's answer may still come
        g.packetReceived(extendedSequence: 2, nowMs: 65)
        #expect(g.stats.recovered == 1)
        #expect(g.stats.requested == 1)
    }

    @Test func firstRequestIsSkippedWhenTheRoundTripExceedsTheWait() {
        var g = Self.generator()
        g.maxAgeMs = 40
        g.packetReceived(extendedSequence: 1, nowMs: 0)
        g.packetReceived(extendedSequence: 3, nowMs: 0)
        #expect(g.poll(nowMs: 10) == [])
        #expect(g.poll(nowMs: 40) == [])
        #expect(g.stats.requested == 0)
        #expect(g.stats.expired == 1)
    }

    @Test func reorderedPacketBeforeAnyRequestIsNotCountedAsRecovered() {
        var g = Self.generator()
        g.packetReceived(extendedSequence: 1, nowMs: 0)
        g.packetReceived(extendedSequence: 3, nowMs: 1)
        g.packetReceived(extendedSequence: 2, nowMs: 2)
        g.packetReceived(extendedSequence: 3, nowMs: 3)  // duplicate
        #expect(g.poll(nowMs: 100) == [])
        #expect(g.stats == NackStats())
    }

    @Test func wireSequenceNumbersWrapAt65536() {
        var g = Self.generator()
        g.packetReceived(extendedSequence: 65534, nowMs: 0)
        g.packetReceived(extendedSequence: 65537, nowMs: 0)
        #expect(g.missingSequences == [65535, 65536])
        #expect(g.poll(nowMs: 10) == [65535, 0])
    }

    @Test func forgetBelowDropsWhatTheJitterBufferGaveUp() {
        var g = Self.generator()
        g.packetReceived(extendedSequence: 1, nowMs: 0)
        g.packetReceived(extendedSequence: 5, nowMs: 0)
        g.forget(below: 4)
        #expect(g.missingSequences == [4])
        #expect(g.stats.expired == 2)
        g.forget(below: 4)
        #expect(g.stats.expired == 2)
        #expect(g.poll(nowMs: 10) == [4])
    }

    @Test func hugeJumpResetsInsteadOfFloodingTheSender() {
        var g = Self.generator()
        g.packetReceived(extendedSequence: 10, nowMs: 0)
        g.packetReceived(extendedSequence: 12, nowMs: 0)
        g.packetReceived(extendedSequence: 1013, nowMs: 1)  // 1001 ahead of 12
        #expect(g.missingSequences == [])
        #expect(g.stats.resets == 1)
        g.packetReceived(extendedSequence: 1015, nowMs: 2)
        #expect(g.missingSequences == [1014])
    }

    @Test func trackedSetIsBoundedByCapacity() {
        var g = NackGenerator(configuration: NackConfiguration(capacity: 4))
        g.packetReceived(extendedSequence: 0, nowMs: 0)
        g.packetReceived(extendedSequence: 10, nowMs: 0)  // 1...9 missing: only the newest 4 kept
        #expect(g.missingSequences == [6, 7, 8, 9])
        #expect(g.stats.evicted == 5)
        g.packetReceived(extendedSequence: 12, nowMs: 0)
        #expect(g.missingSequences == [7, 8, 9, 11])
        #expect(g.stats.evicted == 6)
    }

    @Test func configurationIsSanitised() {
        let c = NackConfiguration(initialDelayMs: -1, maxRequests: 0, rttMs: -3, maxAgeMs: -4, capacity: 0, maxJump: 0)
        #expect(
            c == NackConfiguration(initialDelayMs: 0, maxRequests: 1, rttMs: 0, maxAgeMs: 0, capacity: 1, maxJump: 1))
        let g = NackGenerator(configuration: NackConfiguration(rttMs: 70, maxAgeMs: 300))
        #expect(g.rttMs == 70)
        #expect(g.maxAgeMs == 300)
    }

    @Test func resetForgetsEverything() {
        var g = Self.generator()
        g.packetReceived(extendedSequence: 1, nowMs: 0)
        g.packetReceived(extendedSequence: 3, nowMs: 0)
        g.reset()
        #expect(g.missingSequences == [])
        g.packetReceived(extendedSequence: 40000, nowMs: 1)  // a new baseline, not a jump
        #expect(g.stats.resets == 0)
        #expect(g.missingSequences == [])
    }
}
