/// RFC 3550 interarrival jitter (§6.4.1, Appendix A.8), with arrival time injected in milliseconds.
///
/// For each packet, in arrival order, D is the change in transit time against the previous packet
/// (arrival spacing minus RTP timestamp spacing, both in timestamp units) and J += (|D| − J) / 16.
/// Kept as a `Double` rather than RFC A.8's fixed point (J scaled by 16): the same recurrence
/// without its rounding, and exact whenever the arithmetic is (as in the tests).
public struct JitterEstimator: Sendable, Equatable {
    /// Timestamp units per second, clamped to 1...1_000_000: no RTP payload format runs a faster
    /// clock, and the bound keeps `ms × rate` inside Int64 for any plausible time (a hostile SDP
    /// cannot make the arithmetic trap).
    public let clockRate: Int
    /// Current jitter estimate in RTP timestamp units.
    public private(set) var jitter: Double = 0

    private var lastArrivalUnits: Int64?
    private var lastTimestamp: UInt32 = 0

    public init(clockRate: Int) {
        self.clockRate = min(max(1, clockRate), 1_000_000)
    }

    /// The estimate in milliseconds.
    public var jitterMs: Double { jitter * 1000 / Double(clockRate) }

    /// Feeds one packet's RTP timestamp and arrival time.
    public mutating func update(rtpTimestamp: UInt32, arrivalMs: Int64) {
        let arrival = arrivalMs * Int64(clockRate) / 1000
        if let last = lastArrivalUnits {
            // The timestamp difference is taken modulo 2^32 as a signed value, so wraps are harmless.
            let d = (arrival - last) - Int64(Int32(bitPattern: rtpTimestamp &- lastTimestamp))
            jitter += (Double(d.magnitude) - jitter) / 16
        }
        lastArrivalUnits = arrival
        lastTimestamp = rtpTimestamp
    }

    /// Forgets the previous packet (the next one starts a new transit baseline); keeps the estimate.
    public mutating func restartTransit() { lastArrivalUnits = nil }
}
