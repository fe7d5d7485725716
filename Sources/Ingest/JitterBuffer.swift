import RTP

/// How an adaptive jitter buffer sizes its depth:
/// target = clamp(⌈multiplier × jitter⌉ + allowance, min, max), the allowance being the time a
/// retransmission needs (see `JitterBuffer.retransmissionAllowanceMs`).
public struct AdaptiveDelay: Sendable, Equatable {
    public var minMs: Int64
    public var maxMs: Int64
    /// How many jitters of headroom to keep (3 covers nearly all of a roughly normal spread).
    public var multiplier: Double

    public init(minMs: Int64 = 20, maxMs: Int64 = 200, multiplier: Double = 3) {
        self.minMs = max(0, minMs)
        self.maxMs = max(self.minMs, maxMs)
        self.multiplier = multiplier
    }

    /// Video: 20...200 ms, k = 3.
    public static let video = AdaptiveDelay()
    /// Audio: 20...120 ms, k = 3 (audio latency is felt sooner than video's).
    public static let audio = AdaptiveDelay(minMs: 20, maxMs: 120)

    /// The depth for a jitter of `jitterMs`, rounded up to whole milliseconds, always in [min, max].
    public func target(jitterMs: Double) -> Int64 { target(jitterMs: jitterMs, allowanceMs: 0) }

    /// The depth for a jitter of `jitterMs` plus a fixed `allowanceMs` (e.g. a NACK round trip,
    /// which is delayed by the same jitter), always in [min, max].
    public func target(jitterMs: Double, allowanceMs: Int64) -> Int64 {
        let ms = (multiplier * jitterMs).rounded(.up) + Double(max(0, allowanceMs))
        // Compared as Double first: NaN or a huge value must not reach Int64(_:), which traps.
        guard ms > Double(minMs) else { return minMs }
        guard ms < Double(maxMs) else { return maxMs }
        return Int64(ms)
    }
}

/// The jitter buffer of one inbound stream: a `ReorderBuffer` whose depth (how long a gap is
/// waited for) is either fixed or follows the measured interarrival jitter.
///
/// Entry point for everything between "packet parsed" and "packets in sequence order": insert
/// packets as they arrive, call `drain` on a timer (`nextDeadlineMs` says when), and feed the
/// released packets to a depacketizer. In adaptive mode the RFC 3550 jitter (A.8) is updated on
/// every packet before it is placed, and the depth becomes `AdaptiveDelay.target`: it grows under
/// jitter and, as the estimate decays by 1/16 a packet once arrivals calm down, shrinks back.
/// Packets the buffer rejects as out-of-range jumps do not feed the estimate (their timestamps are
/// another stream's, or garbage), and a sender restart starts a new transit baseline.
/// With NACK on, `retransmissionAllowanceMs` keeps the depth long enough for a retransmission to
/// arrive. A packet arriving after its gap was given up (later than the current depth) is dropped
/// and counted in `stats.late`. Not thread-safe: a value type owned by one stream.
public struct JitterBuffer {
    /// nil when the depth is fixed.
    public let adaptiveDelay: AdaptiveDelay?
    private(set) var reorder: ReorderBuffer
    private var estimator: JitterEstimator
    /// Added to the adaptive depth; 0 unless set.
    public private(set) var retransmissionAllowanceMs: Int64 = 0

    /// A fixed depth of `delayMs` (the plain `ReorderBuffer` behaviour).
    public init(fixedDelayMs delayMs: Int64, clockRate: Int = 90000, capacity: Int = 256) {
        adaptiveDelay = nil
        reorder = ReorderBuffer(maxDelayMs: delayMs, capacity: capacity)
        estimator = JitterEstimator(clockRate: clockRate)
    }

    /// A depth following the jitter of a stream with `clockRate`; it starts at `adaptive.minMs`
    /// (plus the retransmission allowance, once one is set).
    public init(adaptive: AdaptiveDelay, clockRate: Int, capacity: Int = 256) {
        adaptiveDelay = adaptive
        reorder = ReorderBuffer(maxDelayMs: adaptive.target(jitterMs: 0), capacity: capacity)
        estimator = JitterEstimator(clockRate: clockRate)
    }

    /// How long a gap is waited for now, in milliseconds.
    public var currentDelayMs: Int64 { reorder.maxDelayMs }
    /// Interarrival jitter measured so far, in milliseconds.
    public var jitterMs: Double { estimator.jitterMs }
    public var stats: ReorderStats { reorder.stats }
    public var heldCount: Int { reorder.heldCount }
    /// When `drain` should next be called, if packets are held behind a gap.
    public var nextDeadlineMs: Int64? { reorder.nextDeadlineMs }
    /// See `ReorderBuffer.lastExtendedSequence` and `nextExpectedSequence`.
    public var lastExtendedSequence: Int64? { reorder.lastExtendedSequence }
    public var nextExpectedSequence: Int64? { reorder.nextExpectedSequence }

    /// Time a lost packet needs to be asked for and resent (NACK delay + round trip); in adaptive
    /// mode the depth is at least this (bounded by `maxMs`), so a retransmission can still fill
    /// its gap. Ignored with a fixed depth.
    public mutating func setRetransmissionAllowance(_ ms: Int64) {
        retransmissionAllowanceMs = max(0, ms)
        adapt()
    }

    /// Places a packet received at `nowMs`; returns the packets now releasable in order.
    /// `measuresJitter: false` for retransmissions: they arrive a round trip late by design, and
    /// counting that as jitter would deepen the buffer with every recovered loss.
    public mutating func insert(_ packet: RTPPacket, nowMs: Int64, measuresJitter: Bool = true) -> [ReleasedPacket] {
        var out: [ReleasedPacket] = []
        insert(packet, nowMs: nowMs, measuresJitter: measuresJitter, into: &out)
        return out
    }

    /// `insert` for the hot path: appends the released packets to `out`, a buffer the caller reuses and
    /// hands back with `recycle` (no allocation per packet once the stream runs).
    public mutating func insert(
        _ packet: RTPPacket, nowMs: Int64, measuresJitter: Bool = true,
        into out: inout [ReleasedPacket]
    ) {
        // The estimate (and so the depth) is updated before the packet is placed, so a burst of
        // jitter already widens the wait this packet's own gap gets.
        switch reorder.placement(of: packet.sequenceNumber) {
        case .outOfRange:
            break  // about to be dropped: one such packet must not move the depth
        case .restart:
            // A new random timestamp base: the jump in transit time is not jitter. This packet
            // starts the new baseline.
            estimator.restartTransit()
            estimator.update(rtpTimestamp: packet.timestamp, arrivalMs: nowMs)
        case .inSequence:
            if measuresJitter { estimator.update(rtpTimestamp: packet.timestamp, arrivalMs: nowMs) }
            adapt()
        }
        reorder.insert(packet, nowMs: nowMs, into: &out)
    }

    /// Gives up gaps that waited longer than the current depth.
    public mutating func drain(nowMs: Int64) -> [ReleasedPacket] {
        reorder.drain(nowMs: nowMs)
    }

    /// `drain` for the hot path: appends to `out` (see `insert(_:nowMs:measuresJitter:into:)`).
    public mutating func drain(nowMs: Int64, into out: inout [ReleasedPacket]) {
        reorder.drain(nowMs: nowMs, into: &out)
    }

    /// Hands released packets back for reuse and empties `released` (see `ReorderBuffer.recycle`).
    public mutating func recycle(_ released: inout [ReleasedPacket]) {
        reorder.recycle(&released)
    }

    private mutating func adapt() {
        guard let adaptiveDelay else { return }
        reorder.setMaxDelay(adaptiveDelay.target(jitterMs: estimator.jitterMs, allowanceMs: retransmissionAllowanceMs))
    }
}
