/// How a `NackGenerator` paces its requests.
public struct NackConfiguration: Sendable, Equatable {
    /// Wait this long after a gap is seen before the first NACK, so plain reordering settles.
    public var initialDelayMs: Int64
    /// NACKs per missing packet at most (the first included).
    public var maxRequests: Int
    /// Spacing between NACKs of one packet until an RTT estimate is set (`NackGenerator.rttMs`).
    public var rttMs: Int64
    /// A missing packet older than this could not reach the jitter buffer in time: given up. The
    /// initial value of `NackGenerator.maxAgeMs`, which an owner lowers to its jitter buffer's depth.
    public var maxAgeMs: Int64
    /// Missing packets tracked at most; beyond it the oldest are dropped.
    public var capacity: Int
    /// A sequence jump larger than this (either way) resets tracking instead of NACKing the gap.
    public var maxJump: Int64

    public init(
        initialDelayMs: Int64 = 10, maxRequests: Int = 3, rttMs: Int64 = 50, maxAgeMs: Int64 = 400,
        capacity: Int = 512, maxJump: Int64 = 1000
    ) {
        self.initialDelayMs = max(0, initialDelayMs)
        self.maxRequests = max(1, maxRequests)
        self.rttMs = max(0, rttMs)
        self.maxAgeMs = max(0, maxAgeMs)
        self.capacity = max(1, capacity)
        self.maxJump = max(1, maxJump)
    }
}

/// Counters of a `NackGenerator`, cumulative.
public struct NackStats: Equatable, Sendable {
    /// Sequence numbers put into NACKs, repeats included.
    public var requested = 0
    /// Missing packets that arrived after at least one NACK.
    public var recovered = 0
    /// Missing packets given up: too old, or the jitter buffer moved past them.
    public var expired = 0
    /// Missing packets dropped to keep the tracked set within `capacity`.
    public var evicted = 0
    /// Sequence jumps that reset tracking.
    public var resets = 0
    /// Round-trip samples taken (a packet NACKed exactly once arrived).
    public var roundTripSamples = 0

    public init() {}
}

/// Tracks the missing sequence numbers of one stream and decides which to NACK
/// (RFC 4585 §6.2.1 generic NACK), modelled on pion/interceptor's NACK generator.
///
/// Feed it every received packet's extended sequence number; call `poll` on a timer and send what
/// it returns. A missing packet is requested `initialDelayMs` after its gap was seen, then again
/// every `rttMs` up to `maxRequests` times, but only while a retransmission can still arrive in
/// time: a request at `now` is answered around `now + rttMs`, which must come before the packet is
/// `maxAgeMs` old (when the jitter buffer stops waiting for it). It is forgotten when it arrives,
/// when it is `maxAgeMs` old, or when `forget(below:)` says the jitter buffer gave its place up.
/// Memory is bounded by `capacity`. A value type owned by one stream; time is injected in milliseconds.
public struct NackGenerator: Sendable, Equatable {
    public let configuration: NackConfiguration
    /// Current spacing between repeats: `configuration.rttMs` until retransmissions have been
    /// timed, then the smoothed measured round trip (`measuredRttMs`), unless the owner sets it.
    public var rttMs: Int64
    /// The smoothed NACK-to-retransmission time (TCP's SRTT, gain 1/8), nil before the first sample.
    /// Only packets NACKed exactly once are timed (Karn's rule: after a repeat, the answer could
    /// belong to either request). It includes the sender's resend delay, which is what the jitter
    /// buffer must wait for anyway.
    public private(set) var measuredRttMs: Int64?
    /// How long after its gap was seen a missing packet is still useful: the jitter buffer's depth
    /// (the owner keeps it in step; `InboundStream` does). Starts at `configuration.maxAgeMs`.
    public var maxAgeMs: Int64
    public private(set) var stats = NackStats()

    private struct Missing: Sendable, Equatable {
        var extended: Int64
        var detectedMs: Int64
        var requests = 0
        var lastRequestMs: Int64 = 0
    }

    private var highest: Int64?
    /// Sorted by sequence number: gaps are only ever appended above `highest`.
    private var missing: [Missing] = []

    public init(configuration: NackConfiguration = NackConfiguration()) {
        self.configuration = configuration
        rttMs = configuration.rttMs
        maxAgeMs = configuration.maxAgeMs
        missing.reserveCapacity(configuration.capacity)
    }

    /// Extended sequence numbers currently tracked as missing, ascending.
    public var missingSequences: [Int64] { missing.map(\.extended) }

    /// A packet arrived (in any order, duplicates included).
    public mutating func packetReceived(extendedSequence seq: Int64, nowMs: Int64) {
        guard let top = highest else {
            highest = seq
            return
        }
        if seq > top + configuration.maxJump || seq < top - configuration.maxJump {
            // A sender restart or a wild jump: NACKing the gap would flood the sender for packets
            // that are not coming. Start over from here.
            missing.removeAll(keepingCapacity: true)
            highest = seq
            stats.resets += 1
            return
        }
        if seq <= top {
            let i = index(of: seq)
            if i < missing.count && missing[i].extended == seq {
                if missing[i].requests > 0 { stats.recovered += 1 }
                if missing[i].requests == 1 { sampleRoundTrip(nowMs - missing[i].lastRequestMs) }
                missing.remove(at: i)
            }
            return
        }
        // New gap top+1 ..< seq; only the newest `capacity` numbers can be kept.
        let gapStart = max(top + 1, seq - Int64(configuration.capacity))
        stats.evicted += Int(gapStart - (top + 1))
        var s = gapStart
        while s < seq {
            missing.append(Missing(extended: s, detectedMs: nowMs))
            s += 1
        }
        let excess = missing.count - configuration.capacity
        if excess > 0 {
            missing.removeFirst(excess)
            stats.evicted += excess
        }
        highest = seq
    }

    /// The sequence numbers to NACK now (ascending, 16-bit as on the wire); updates their pacing.
    public mutating func poll(nowMs: Int64) -> [UInt16] {
        var out: [UInt16] = []
        var kept = 0
        let rtt = max(0, rttMs)
        // Compacts in place: one pass, no allocation besides the result.
        for i in missing.indices {
            var entry = missing[i]
            let age = nowMs - entry.detectedMs
            if age >= maxAgeMs {
                stats.expired += 1
                continue
            }
            let due =
                entry.requests == 0
                ? age >= configuration.initialDelayMs
                : entry.requests < configuration.maxRequests && nowMs - entry.lastRequestMs >= rtt
            // An answer arriving at `age + rtt` or later finds the jitter buffer gone past the gap.
            // Still tracked (not expired): an answer to an earlier request may yet arrive.
            let (answeredAge, overflow) = age.addingReportingOverflow(rtt)
            if due && !overflow && answeredAge < maxAgeMs {
                entry.requests += 1
                entry.lastRequestMs = nowMs
                out.append(UInt16(truncatingIfNeeded: entry.extended))
            }
            missing[kept] = entry
            kept += 1
        }
        missing.removeLast(missing.count - kept)
        stats.requested += out.count
        return out
    }

    /// Longest round trip a sample may report: beyond it the packet was not an answer to the NACK
    /// (or came from a sender too slow to help), and must not stretch the estimate.
    static let maxRoundTripSampleMs: Int64 = 1000

    private mutating func sampleRoundTrip(_ sampleMs: Int64) {
        guard sampleMs >= 0, sampleMs <= Self.maxRoundTripSampleMs else { return }
        stats.roundTripSamples += 1
        let smoothed = measuredRttMs.map { ($0 * 7 + sampleMs + 4) / 8 } ?? sampleMs
        measuredRttMs = smoothed
        rttMs = smoothed
    }

    /// True when `sequence` (16-bit, as on the wire) is a missing packet that has been NACKed:
    /// its arrival now is a retransmission, whose transit time says nothing about jitter.
    public func isAwaitingRetransmission(sequence: UInt16) -> Bool {
        guard let top = highest else { return false }
        let behind = Int64(UInt16(truncatingIfNeeded: top) &- sequence)
        guard behind > 0, behind < 0x8000 else { return false }
        let i = index(of: top - behind)
        return i < missing.count && missing[i].extended == top - behind && missing[i].requests > 0
    }

    /// Gives up every missing packet below `extendedSequence` (the jitter buffer no longer waits
    /// for them, so a retransmission would arrive late anyway).
    public mutating func forget(below extendedSequence: Int64) {
        let n = index(of: extendedSequence)
        guard n > 0 else { return }
        missing.removeFirst(n)
        stats.expired += n
    }

    /// Forgets everything (the stream restarted).
    public mutating func reset() {
        missing.removeAll(keepingCapacity: true)
        highest = nil
    }

    /// First index whose sequence number is >= `seq`.
    private func index(of seq: Int64) -> Int {
        var low = 0, high = missing.count
        while low < high {
            let mid = (low + high) / 2
            if missing[mid].extended < seq { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
