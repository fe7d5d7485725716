import RTP

/// The RTCP feedback an inbound stream produces: reception reports, NACKs, keyframe requests,
/// and what it learns from the source's sender reports.
extension InboundStream {
    /// The reception report block for this source now (RFC 3550 §6.4.1). Fraction lost covers
    /// the interval since the previous call: call once per RTCP report sent.
    public func receptionReport(nowMs: Int64) -> ReceptionReport {
        reception.report(nowMs: nowMs)
    }

    /// A sender report from this source arrived: remembered for LSR/DLSR and as the reference of
    /// `senderClock`. `ntp` is the SR's 64-bit NTP timestamp.
    public func noteSenderReport(ntp: UInt64, rtpTimestamp: UInt32, nowMs: Int64) {
        reception.senderReportReceived(ntp: ntp, arrivalMs: nowMs)
        senderClock.update(ntp: ntp, rtpTimestamp: rtpTimestamp)
    }

    /// Sequence numbers to NACK now (always empty unless created with `nack: true`). Only packets
    /// whose retransmission can still arrive before the jitter buffer gives their gap up (within
    /// its current depth, one round trip from now) are asked for.
    public func nacks(nowMs: Int64) -> [UInt16] {
        guard let maxAgeMs = nack?.configuration.maxAgeMs else { return [] }
        // The generator is mutated in place (`nack?.…`), so its missing-packet list is never copied.
        if let next = buffer.nextExpectedSequence { nack?.forget(below: next) }
        // A gap is waited for `currentDelayMs` from the arrival of the packet that revealed it,
        // which is when the generator saw it too.
        nack?.maxAgeMs = min(maxAgeMs, buffer.currentDelayMs)
        let list = nack?.poll(nowMs: nowMs) ?? []
        counters.nacksSent += list.count
        return list
    }

    /// Counters of the NACK generator; nil unless created with `nack: true`.
    public var nackStats: NackStats? { nack?.stats }

    /// Sets the spacing between repeated NACKs of one packet to a measured round-trip time; an
    /// adaptive jitter buffer's depth then leaves room for the NACK delay, this round trip and a margin.
    public func setRoundTripTime(ms: Int64) {
        guard let configuration = nack?.configuration else { return }
        nack?.rttMs = max(0, ms)
        buffer.setRetransmissionAllowance(Self.retransmissionAllowance(configuration, rttMs: max(0, ms)))
    }

    /// Time the sender's pacer and resend handling add to a retransmission beyond the round trip.
    /// Without it, an answer due exactly one RTT after the NACK would tie with the give-up.
    static let retransmissionMarginMs: Int64 = 10

    /// NACK delay plus round trip plus margin; saturating, as the RTT may come from a hostile
    /// receiver report.
    static func retransmissionAllowance(_ configuration: NackConfiguration, rttMs: Int64) -> Int64 {
        let (withRoundTrip, overflow1) = configuration.initialDelayMs.addingReportingOverflow(max(0, rttMs))
        let (total, overflow2) = withRoundTrip.addingReportingOverflow(retransmissionMarginMs)
        return overflow1 || overflow2 ? Int64.max : total
    }

    /// True when a PLI/FIR should be sent now: a keyframe is needed (`needsKeyframe`) and the
    /// requester lets one through (reason `join` before the first keyframe, else `unrecoverableLoss`).
    public func requestKeyframeIfNeeded(nowMs: Int64) -> Bool {
        guard needsKeyframe else { return false }
        return keyframeRequester.request(reason: sawKeyframe ? .unrecoverableLoss : .join, nowMs: nowMs)
    }
}
