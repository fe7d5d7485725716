import RTP

/// Opus frames released by a participant's jitter buffer and not yet decoded, oldest first.
///
/// The UDP thread only parses and orders packets; decoding waits for the mixer's pull on the room's queue.
/// One event-loop thread decoding every voice in the server was the ceiling of a machine full of voice
/// rooms (it reached a whole core at 50 rooms while the room queues ran on the others); decoded at the pull,
/// the work spreads over the rooms' threads, and nothing is decoded before it is needed.
///
/// A fixed ring of reused byte buffers (hot path: a frame is copied in, nothing is allocated once each
/// slot has held its largest frame). When it is full the caller decodes the oldest frame at once, so a
/// stalled mixer neither loses audio nor grows memory.
public struct PendingAudioFrames {
    public struct Entry {
        public internal(set) var data: [UInt8] = []
        public internal(set) var rtpTimestamp: UInt32 = 0
        /// When the frame was released, for the wall-clock concealment credit.
        public internal(set) var releasedMs: Int64 = 0
    }

    private var slots: [Entry]
    private var head = 0
    public private(set) var count = 0

    public init(capacity: Int = 16, reserveBytes: Int = 256) {
        slots = (0..<max(1, capacity)).map { _ in
            var entry = Entry()
            entry.data.reserveCapacity(reserveBytes)
            return entry
        }
    }

    public var capacity: Int { slots.count }
    public var isEmpty: Bool { count == 0 }
    public var isFull: Bool { count == slots.count }

    /// Queues a copy of `frame`. The caller decodes the oldest first when the ring `isFull`; should it not,
    /// the oldest frame is dropped rather than the ring grown.
    public mutating func push(_ frame: EncodedFrame, releasedMs: Int64) {
        if isFull { _ = popFirst() }
        let index = (head + count) % slots.count
        // Copied into the slot's own storage, whose capacity is kept: no allocation once it has held a
        // frame this large.
        slots[index].data.removeAll(keepingCapacity: true)
        slots[index].data.append(contentsOf: frame.data)
        slots[index].rtpTimestamp = frame.rtpTimestamp
        slots[index].releasedMs = releasedMs
        count += 1
    }

    /// The oldest queued frame. It shares its slot's buffer until the caller lets it go, so let it go
    /// before the next `push` (which would otherwise copy the buffer).
    public mutating func popFirst() -> Entry? {
        guard count > 0 else { return nil }
        let entry = slots[head]
        head = (head + 1) % slots.count
        count -= 1
        return entry
    }
}
