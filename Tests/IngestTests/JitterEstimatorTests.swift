import Testing
@testable import Ingest

@Suite struct JitterEstimatorTests {
    /// RFC 3550 A.8 by hand at 8 kHz (8 units/ms), 20 ms packets (160 units):
    /// arrivals 0, 20, 45, 60, 80 ms → D = 0, +40, −40, 0 units.
    @Test func followsRFC3550RecurrenceOnAHandBuiltArrivalSequence() {
        var e = JitterEstimator(clockRate: 8000)
        let packets: [(ts: UInt32, ms: Int64)] = [(0, 0), (160, 20), (320, 45), (480, 60), (640, 80)]
        var trace: [Double] = []
        for p in packets {
            e.update(rtpTimestamp: p.ts, arrivalMs: p.ms)
            trace.append(e.jitter)
        }
        // J = 0; 0; 40/16 = 2.5; 2.5 + (40 − 2.5)/16 = 4.84375; 4.84375 − 4.84375/16 = 4.541015625.
        #expect(trace == [0, 0, 2.5, 4.84375, 4.541015625])
        #expect(e.jitterMs == 4.541015625 / 8)
    }

    @Test func differenceIsTakenInArrivalOrderForReorderedPackets() {
        var e = JitterEstimator(clockRate: 1000)
        e.update(rtpTimestamp: 0, arrivalMs: 0)
        e.update(rtpTimestamp: 40, arrivalMs: 20)  // 20 ms early against its timestamp: |D| = 20
        #expect(e.jitter == 1.25)
        e.update(rtpTimestamp: 20, arrivalMs: 21)  // arrives after 40: D = 1 − (−20) = 21
        #expect(e.jitter == 1.25 + (21 - 1.25) / 16)
    }

    @Test func timestampWrapIsNotJitter() {
        var e = JitterEstimator(clockRate: 90000)
        e.update(rtpTimestamp: 0xFFFF_F448, arrivalMs: 1000)  // 3000 units before the wrap
        e.update(rtpTimestamp: 0x0000_0000, arrivalMs: 1000 + 33)  // +3000 units, +2970 units of time
        #expect(e.jitter == 30.0 / 16)
    }

    @Test func restartTransitKeepsTheEstimateAndSkipsTheNextDifference() {
        var e = JitterEstimator(clockRate: 1000)
        e.update(rtpTimestamp: 0, arrivalMs: 0)
        e.update(rtpTimestamp: 20, arrivalMs: 36)
        #expect(e.jitter == 1)
        e.restartTransit()
        e.update(rtpTimestamp: 2_000_000_000, arrivalMs: 40)  // a new timestamp base: no D
        #expect(e.jitter == 1)
        e.update(rtpTimestamp: 2_000_000_020, arrivalMs: 60)  // on time against the new base
        #expect(e.jitter == 1 - 1.0 / 16)
    }

    @Test func clockRateIsClampedSoHostileRatesCannotTrap() {
        #expect(JitterEstimator(clockRate: 0).clockRate == 1)
        #expect(JitterEstimator(clockRate: -5).clockRate == 1)
        var e = JitterEstimator(clockRate: Int.max)
        #expect(e.clockRate == 1_000_000)
        e.update(rtpTimestamp: 0, arrivalMs: 1_000_000_000_000)
        e.update(rtpTimestamp: 0, arrivalMs: 1_000_000_000_016)  // 16 ms = 16000 units of transit
        #expect(e.jitter == 1000)
        #expect(e.jitterMs == 1)
    }
}
