import RTP

/// A packet leaving the reorder buffer, in sequence order.
public struct ReleasedPacket: Equatable, Sendable {
    public var packet: RTPPacket
    /// Packets were given up as lost just before this one (or the stream restarted).
    public var afterLoss: Bool

    public init(packet: RTPPacket, afterLoss: Bool) {
        self.packet = packet
        self.afterLoss = afterLoss
    }
}

/// Counters of a `ReorderBuffer`, cumulative since it was created.
public struct ReorderStats: Equatable, Sendable {
    /// Every packet handed to `insert`.
    public var received = 0
    /// Packets seen before: already waiting, or recently released.
    public var duplicates = 0
    /// Packets that arrived after their place was already given up or released.
    public var late = 0
    /// Sequence numbers given up (a late arrival afterwards does not take it back).
    public var lost = 0
    /// Packets accepted with a sequence number below the highest already seen.
    public var reordered = 0
    /// Packets dropped for jumping far from the stream (RFC 3550 A.1 probation).
    public var outOfRange = 0
    /// Times the sender restarted its sequence and the buffer followed it.
    public var resyncs = 0

    public init() {}
}

/// A small reordering buffer keyed by extended sequence number, with time injected in milliseconds.
///
/// Packets are released in sequence order as soon as they are contiguous. A gap is waited for at
/// most `maxDelayMs` (measured from the arrival of the oldest packet held behind it) or until more
/// than `capacity` packets are held; then the gap is given up and the next packet is released with
/// `afterLoss = true`. A jump of 3000 or more forward, or 1000 or more back, is treated as RFC 3550
/// A.1 does: the packet is dropped unless the next one follows it, in which case the sender restarted
/// and the buffer resyncs to it. Not thread-safe: a value type owned by one stream.
public struct ReorderBuffer {
    /// How long a gap is waited for; `setMaxDelay` changes it (the adaptive `JitterBuffer` does).
    public private(set) var maxDelayMs: Int64
    public let capacity: Int
    public private(set) var stats = ReorderStats()
    /// Extended sequence number of the packet last handed to `insert`, whatever became of it
    /// (released, held, duplicate, late); nil when it was dropped as an out-of-range jump.
    public private(set) var lastExtendedSequence: Int64?

    static let maxDropout = 3000
    static let maxMisorder = 1000
    /// Recently released sequence numbers, to tell duplicates from late packets.
    static let historySize = 1024

    private struct Entry {
        var extended: Int64
        var packet: RTPPacket
        var arrivalMs: Int64
    }

    private var unwrapper = SequenceUnwrapper()
    private var nextExpected: Int64?
    /// Held packets sorted by extended sequence number; at most `capacity` long.
    private var pending: [Entry] = []
    private var history: [Int64]
    private var lossBeforeNext = false
    private var probation: UInt16?
    /// Packets handed back by `recycle`: their arrays keep their capacity, and `insert` copies the next
    /// packet into one of them instead of keeping the caller's (hot path: no allocation per packet once
    /// the stream runs). At most `maxSpares`: steady streams hold a few packets at a time, and a rare burst
    /// beyond that is freed again rather than kept for the stream's lifetime.
    private var spares: [RTPPacket] = []
    private var maxSpares: Int { min(capacity + 2, 64) }

    /// `maxDelayMs`: e.g. 40 for audio, 80 for video. `capacity` (at least 1) bounds memory.
    public init(maxDelayMs: Int64, capacity: Int) {
        self.maxDelayMs = max(0, maxDelayMs)
        self.capacity = max(1, capacity)
        history = Array(repeating: Int64.min, count: Self.historySize)
        pending.reserveCapacity(self.capacity + 1)
        spares.reserveCapacity(min(self.capacity + 2, 64))
    }

    /// The next extended sequence number to release; everything below it was released or given up.
    public var nextExpectedSequence: Int64? { nextExpected }

    /// Changes the wait for gaps from now on (packets already held are measured against it too).
    public mutating func setMaxDelay(_ ms: Int64) { maxDelayMs = max(0, ms) }

    /// Packets held waiting for a gap to fill.
    public var heldCount: Int { pending.count }

    /// When `drain` will next have something to give up, if anything is held.
    public var nextDeadlineMs: Int64? {
        pending.lazy.map(\.arrivalMs).min().map { $0 + maxDelayMs }
    }

    /// Insert a packet received at `nowMs`. Returns packets now releasable in order (including any
    /// whose wait expired). Duplicates and packets older than the last released are dropped (counted).
    public mutating func insert(_ packet: RTPPacket, nowMs: Int64) -> [ReleasedPacket] {
        var out: [ReleasedPacket] = []
        insert(packet, nowMs: nowMs, into: &out)
        return out
    }

    /// `insert` for the hot path: appends the released packets to `out` (a buffer the caller reuses)
    /// and keeps a copy of `packet` in a recycled slot, so nothing is allocated per packet once the
    /// caller hands the released packets back with `recycle`.
    public mutating func insert(_ packet: RTPPacket, nowMs: Int64, into out: inout [ReleasedPacket]) {
        stats.received += 1
        lastExtendedSequence = nil
        let seq = packet.sequenceNumber
        switch placement(of: seq) {
        case .outOfRange:
            probation = seq &+ 1
            stats.outOfRange += 1
            return expire(nowMs: nowMs, into: &out)
        case .restart:
            resync(into: &out)
        case .inSequence:
            break
        }
        probation = nil

        let previousHighest = unwrapper.highest
        let extended = unwrapper.unwrap(seq)
        lastExtendedSequence = extended
        if nextExpected == nil { nextExpected = extended }
        guard let next = nextExpected, extended >= next else {
            if history[slot(extended)] == extended { stats.duplicates += 1 } else { stats.late += 1 }
            return expire(nowMs: nowMs, into: &out)
        }
        let index = insertionIndex(extended)
        if index < pending.count && pending[index].extended == extended {
            stats.duplicates += 1
            return expire(nowMs: nowMs, into: &out)
        }
        if let previousHighest, extended < previousHighest { stats.reordered += 1 }
        // Copied into a recycled packet's storage: the caller's packet (a reused parse buffer) stays its own.
        var slot = spares.popLast() ?? RTPPacket(payloadType: 0, sequenceNumber: 0, timestamp: 0, ssrc: 0)
        slot.assign(packet)
        pending.insert(Entry(extended: extended, packet: slot, arrivalMs: nowMs), at: index)
        releaseContiguous(into: &out)
        while pending.count > capacity { giveUpGap(into: &out) }
        return expire(nowMs: nowMs, into: &out)
    }

    /// What `insert` will make of a packet with sequence number `seq`.
    enum Placement: Equatable {
        /// Within the stream's window: placed (or counted as duplicate/late).
        case inSequence
        /// A jump of `maxDropout` or more ahead, or `maxMisorder` or more back: dropped.
        case outOfRange
        /// Follows the previous out-of-range packet: the sender restarted, the buffer resyncs.
        case restart
    }

    /// Classifies `seq` without changing anything (the adaptive `JitterBuffer` uses it to keep
    /// dropped packets out of its jitter estimate).
    func placement(of seq: UInt16) -> Placement {
        guard let highest = unwrapper.highest else { return .inSequence }
        let ahead = Int(seq &- UInt16(truncatingIfNeeded: highest))
        guard ahead >= Self.maxDropout && ahead <= 65536 - Self.maxMisorder else { return .inSequence }
        return probation == seq ? .restart : .outOfRange
    }

    /// Releases packets whose wait has expired: each gap given up counts as lost, and the packet
    /// after it is released with `afterLoss = true`.
    public mutating func drain(nowMs: Int64) -> [ReleasedPacket] {
        var out: [ReleasedPacket] = []
        expire(nowMs: nowMs, into: &out)
        return out
    }

    /// `drain` for the hot path: appends to `out`, a buffer the caller reuses (see `recycle`).
    public mutating func drain(nowMs: Int64, into out: inout [ReleasedPacket]) {
        expire(nowMs: nowMs, into: &out)
    }

    /// Takes back packets this buffer released (once the caller is done with them) and empties `released`,
    /// keeping its capacity: their storage is reused by the next inserts (no allocation per packet).
    public mutating func recycle(_ released: inout [ReleasedPacket]) {
        for item in released where spares.count < maxSpares { spares.append(item.packet) }
        released.removeAll(keepingCapacity: true)
    }

    /// Packets kept for reuse (tests pin that the pool stays bounded).
    var spareCount: Int { spares.count }

    private func slot(_ extended: Int64) -> Int {
        Int(extended & Int64(Self.historySize - 1))
    }

    /// First index whose sequence number is >= `extended` (binary search; `pending` is sorted).
    private func insertionIndex(_ extended: Int64) -> Int {
        var low = 0, high = pending.count
        while low < high {
            let mid = (low + high) / 2
            if pending[mid].extended < extended { low = mid + 1 } else { high = mid }
        }
        return low
    }

    private mutating func releaseContiguous(into out: inout [ReleasedPacket]) {
        while let first = pending.first, first.extended == nextExpected {
            pending.removeFirst()
            out.append(ReleasedPacket(packet: first.packet, afterLoss: lossBeforeNext))
            lossBeforeNext = false
            history[slot(first.extended)] = first.extended
            nextExpected = first.extended + 1
        }
    }

    /// Stops waiting for the gap before the first held packet.
    private mutating func giveUpGap(into out: inout [ReleasedPacket]) {
        guard let first = pending.first, let next = nextExpected else { return }
        if first.extended > next {
            stats.lost += Int(first.extended - next)
            lossBeforeNext = true
        }
        nextExpected = first.extended
        releaseContiguous(into: &out)
    }

    private mutating func expire(nowMs: Int64, into out: inout [ReleasedPacket]) {
        while let deadline = nextDeadlineMs, nowMs >= deadline { giveUpGap(into: &out) }
    }

    /// The sender restarted its sequence: release what is held, then start over from the next packet.
    private mutating func resync(into out: inout [ReleasedPacket]) {
        while !pending.isEmpty { giveUpGap(into: &out) }
        stats.resyncs += 1
        unwrapper.reset()
        nextExpected = nil
        for i in history.indices { history[i] = Int64.min }
        lossBeforeNext = true
    }
}
