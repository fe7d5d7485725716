/// Maps a source's RTP timestamps to the sender's wall clock (NTP time) from its sender reports
/// (RFC 3550 §6.4.1): the groundwork for lip-sync between its audio and video.
///
/// The latest SR is the reference; a timestamp is placed within ±2^31 units of it, so RTP wraps
/// (every 13 h at 90 kHz, 24 h at 48 kHz) are handled.
public struct SenderClock: Sendable, Equatable {
    /// Timestamp units per second (at least 1).
    public let clockRate: Int
    /// The reference: NTP time (64-bit, 32.32 fixed point seconds since 1900) and RTP timestamp
    /// of the latest sender report.
    public var reference: (ntp: UInt64, rtpTimestamp: UInt32)? {
        referenceNTP.map { ($0, referenceRTP) }
    }

    private var referenceNTP: UInt64?
    private var referenceRTP: UInt32 = 0

    public init(clockRate: Int) { self.clockRate = max(1, clockRate) }

    /// A sender report arrived; it becomes the reference.
    public mutating func update(ntp: UInt64, rtpTimestamp: UInt32) {
        referenceNTP = ntp
        referenceRTP = rtpTimestamp
    }

    /// NTP seconds (since 1900) at which the sender sampled `rtpTimestamp`; nil before any SR.
    public func ntpSeconds(rtpTimestamp: UInt32) -> Double? {
        guard let ntp = referenceNTP else { return nil }
        let base = Double(ntp >> 32) + Double(ntp & 0xFFFF_FFFF) / 4_294_967_296
        return base + Double(offset(rtpTimestamp)) / Double(clockRate)
    }

    /// The same instant as a 64-bit NTP timestamp (exact to the 2^-32 s grid, rounded down).
    public func ntpTimestamp(rtpTimestamp: UInt32) -> UInt64? {
        guard let ntp = referenceNTP else { return nil }
        let units = offset(rtpTimestamp)
        let rate = Int64(clockRate)
        // Whole seconds and the remainder apart, so units × 2^32 never overflows.
        var seconds = units / rate
        var remainder = units % rate
        if remainder < 0 {
            seconds -= 1
            remainder += rate
        }
        // remainder × 2^32 / rate in 128 bits: the remainder can be as large as the (SDP-given)
        // rate, so a plain shift could drop high bits. The quotient is < 2^32 as remainder < rate.
        let fraction = UInt64(rate).dividingFullWidth(
            (
                high: UInt64(remainder) >> 32,
                low: UInt64(remainder) << 32
            )
        ).quotient
        return ntp &+ UInt64(bitPattern: seconds << 32) &+ fraction
    }

    /// Timestamp units from the reference to `rtpTimestamp`, signed modulo 2^32.
    private func offset(_ rtpTimestamp: UInt32) -> Int64 {
        Int64(Int32(bitPattern: rtpTimestamp &- referenceRTP))
    }
}
