import RTP

/// Receiver-side statistics of one RTP source, turned into RFC 3550 reception report blocks
/// (§6.4.1; the bookkeeping of Appendix A.3 and the jitter of A.8).
///
/// Feed it every packet that passed validation (duplicates and late ones included: RFC 3550 counts
/// them, which is why cumulative loss can go negative) and every sender report of the source.
/// Time is injected in milliseconds. A value type owned by one stream; not shared.
public struct ReceptionStatistics: Sendable, Equatable {
    public let ssrc: UInt32
    /// Packets received since the start (or the last sequence restart).
    public private(set) var received: Int64 = 0
    private var estimator: JitterEstimator
    private var baseSequence: Int64?
    private var highestSequence: Int64 = 0
    private var expectedPrior: Int64 = 0
    private var receivedPrior: Int64 = 0
    private var lastSenderReport: UInt32 = 0
    private var lastSenderReportArrivalMs: Int64?

    public init(ssrc: UInt32, clockRate: Int) {
        self.ssrc = ssrc
        estimator = JitterEstimator(clockRate: clockRate)
    }

    /// Interarrival jitter in RTP timestamp units.
    public var jitter: Double { estimator.jitter }

    /// Highest extended sequence number seen, nil before the first packet.
    public var extendedHighestSequence: Int64? { baseSequence == nil ? nil : highestSequence }

    /// Packets expected: highest − base + 1 (A.3), 0 before the first packet.
    public var expected: Int64 {
        guard let baseSequence else { return 0 }
        return highestSequence - baseSequence + 1
    }

    /// Expected minus received; negative when duplicates outnumber losses.
    public var cumulativeLost: Int64 { expected - received }

    /// One received packet. `extendedSequence` is the sequence number unwrapped across wraps
    /// (e.g. by `SequenceUnwrapper`). Retransmissions pass `measuresJitter: false`: they count as
    /// received but their transit time is not jitter (libwebrtc's receive statistics do the same).
    public mutating func packetReceived(
        extendedSequence: Int64, rtpTimestamp: UInt32, arrivalMs: Int64,
        measuresJitter: Bool = true
    ) {
        if let base = baseSequence {
            // A packet from before the first one seen (reordered at the start) widens the range
            // instead of counting as a negative loss.
            if extendedSequence < base { baseSequence = extendedSequence }
            if extendedSequence > highestSequence { highestSequence = extendedSequence }
        } else {
            baseSequence = extendedSequence
            highestSequence = extendedSequence
        }
        received += 1
        if measuresJitter { estimator.update(rtpTimestamp: rtpTimestamp, arrivalMs: arrivalMs) }
    }

    /// A sender report from this source arrived: `ntpMiddle` is the middle 32 bits of its NTP
    /// timestamp (the LSR field echoed back to the sender).
    public mutating func senderReportReceived(ntpMiddle: UInt32, arrivalMs: Int64) {
        lastSenderReport = ntpMiddle
        lastSenderReportArrivalMs = arrivalMs
    }

    /// A sender report with its full 64-bit NTP timestamp.
    public mutating func senderReportReceived(ntp: UInt64, arrivalMs: Int64) {
        senderReportReceived(ntpMiddle: UInt32(truncatingIfNeeded: ntp >> 16), arrivalMs: arrivalMs)
    }

    /// The sender restarted its sequence numbers (RFC 3550 A.1 `init_seq`): counting starts over
    /// from the next packet. Jitter and the last sender report are kept.
    public mutating func restartSequence() {
        baseSequence = nil
        highestSequence = 0
        received = 0
        expectedPrior = 0
        receivedPrior = 0
        estimator.restartTransit()
    }

    /// The report block for now. Fraction lost covers the interval since the previous call, so
    /// call this exactly once per RTCP report sent.
    public mutating func report(nowMs: Int64) -> ReceptionReport {
        let expected = self.expected
        let expectedInterval = expected - expectedPrior
        let receivedInterval = received - receivedPrior
        let lostInterval = expectedInterval - receivedInterval
        expectedPrior = expected
        receivedPrior = received
        var fraction: UInt8 = 0
        if expectedInterval > 0 && lostInterval > 0 {
            // (lost << 8) / expected, as A.3; 256 (everything lost) does not fit in 8 bits.
            fraction = UInt8(min(255, lostInterval * 256 / expectedInterval))
        }
        let totalLost = Int32(min(max(cumulativeLost, -0x80_0000), 0x7F_FFFF))
        var delay: UInt32 = 0
        if let arrival = lastSenderReportArrivalMs {
            // 1/65536 s units; capped before multiplying so a stale SR cannot overflow.
            let ms = min(max(0, nowMs - arrival), Int64(UInt32.max) * 1000 / 65536)
            delay = UInt32(ms * 65536 / 1000)
        }
        return ReceptionReport(
            ssrc: ssrc, fractionLost: fraction, totalLost: totalLost,
            extendedHighestSequence: UInt32(truncatingIfNeeded: highestSequence),
            jitter: UInt32(min(jitter, Double(UInt32.max))),
            lastSenderReport: lastSenderReport, delaySinceLastSenderReport: delay)
    }
}
