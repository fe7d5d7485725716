import Testing
@testable import Ingest

@Suite struct SenderClockTests {
    /// 3 900 000 000.5 s since 1900, sampled at RTP time 900 000.
    static let ntp = ntpTime(3_900_000_000, 0x8000_0000)

    static func ntpTime(_ seconds: UInt64, _ fraction: UInt64) -> UInt64 { seconds << 32 | fraction }

    static func clock() -> SenderClock {
        var c = SenderClock(clockRate: 90000)
        c.update(ntp: ntp, rtpTimestamp: 900_000)
        return c
    }

    @Test func nothingIsMappedBeforeTheFirstSenderReport() {
        let c = SenderClock(clockRate: 90000)
        #expect(c.reference == nil)
        #expect(c.ntpSeconds(rtpTimestamp: 0) == nil)
        #expect(c.ntpTimestamp(rtpTimestamp: 0) == nil)
    }

    @Test func timestampsAfterTheReferenceAreLaterOnTheSenderClock() {
        let c = Self.clock()
        #expect(c.reference?.ntp == Self.ntp)
        #expect(c.reference?.rtpTimestamp == 900_000)
        #expect(c.ntpTimestamp(rtpTimestamp: 900_000) == Self.ntp)
        #expect(c.ntpTimestamp(rtpTimestamp: 945_000) == 3_900_000_001 << 32)  // +0.5 s
        #expect(c.ntpSeconds(rtpTimestamp: 945_000) == 3_900_000_001)
        // One unit: floor(2^32 / 90000) = 47721 of the NTP fraction.
        #expect(c.ntpTimestamp(rtpTimestamp: 900_001) == Self.ntp + 47721)
    }

    @Test func timestampsBeforeTheReferenceAreEarlier() {
        let c = Self.clock()
        // −0.25 s.
        #expect(c.ntpTimestamp(rtpTimestamp: 877_500) == Self.ntpTime(3_900_000_000, 0x4000_0000))
        // −1.25 s crosses a whole second downwards.
        #expect(c.ntpTimestamp(rtpTimestamp: 787_500) == Self.ntpTime(3_899_999_999, 0x4000_0000))
        #expect(c.ntpSeconds(rtpTimestamp: 787_500) == 3_899_999_999.25)
    }

    @Test func rtpWrapIsFollowed() {
        var c = SenderClock(clockRate: 48000)
        c.update(ntp: 1000 << 32, rtpTimestamp: 0xFFFF_4480)  // 48000 units before the wrap
        #expect(c.ntpTimestamp(rtpTimestamp: 0x0000_5DC0) == Self.ntpTime(1001, 0x8000_0000))  // +72000 = +1.5 s
        #expect(c.ntpSeconds(rtpTimestamp: 0xFFFE_8900) == 999)  // −48000
    }

    @Test func latestSenderReportBecomesTheReference() {
        var c = Self.clock()
        c.update(ntp: 4_000_000_000 << 32, rtpTimestamp: 10)
        #expect(c.reference?.ntp == 4_000_000_000 << 32)
        #expect(c.ntpTimestamp(rtpTimestamp: 90_010) == 4_000_000_001 << 32)
    }

    @Test func absurdClockRateStaysExact() {
        #expect(SenderClock(clockRate: 0).clockRate == 1)
        // 2^40 units per second: one unit before the reference is 2^−40 s earlier, i.e. the
        // 32-bit fraction rounds down to one step (2^−32 s) before it.
        var c = SenderClock(clockRate: 1 << 40)
        c.update(ntp: 5 << 32, rtpTimestamp: 100)
        #expect(c.ntpTimestamp(rtpTimestamp: 99) == 5 << 32 - 1)
        #expect(c.ntpTimestamp(rtpTimestamp: 100 + (1 << 8)) == 5 << 32 + 1)  // 2^−32 s = 256 units: +1 step
    }
}
