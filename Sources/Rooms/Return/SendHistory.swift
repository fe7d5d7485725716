/// The last packets of a room view stream, by their shared index, for retransmission on NACK (RFC 4585 §6.2.1).
/// A ring of reused buffers: recording a packet allocates nothing once each slot has held a full-size one.
/// Confined to the room's queue.
struct SendHistory {
    struct Entry {
        var index: Int64 = -1
        var timestamp: UInt32 = 0
        var marker = false
        var payload: [UInt8] = []
    }

    private var slots: [Entry]
    /// The index the next recorded packet gets.
    private(set) var nextIndex: Int64 = 0

    /// `capacity` packets: 1024 hold about 2 s of a 500 kbit/s view, more than any NACK is worth answering.
    init(capacity: Int = 1024) {
        slots = (0..<capacity).map { _ in
            var e = Entry()
            e.payload.reserveCapacity(1300)
            return e
        }
    }

    /// Records the next packet: its payload is written by `write` into the slot's reused buffer. Returns its index.
    @discardableResult
    mutating func record(timestamp: UInt32, marker: Bool, _ write: (inout [UInt8]) -> Void) -> Int64 {
        let index = nextIndex
        nextIndex += 1
        let i = Int(index % Int64(slots.count))
        slots[i].index = index
        slots[i].timestamp = timestamp
        slots[i].marker = marker
        slots[i].payload.removeAll(keepingCapacity: true)
        write(&slots[i].payload)
        return index
    }

    /// The packet of `index`, if it is still held.
    func packet(_ index: Int64) -> Entry? {
        guard index >= 0, index < nextIndex else { return nil }
        let slot = slots[Int(index % Int64(slots.count))]
        return slot.index == index ? slot : nil
    }

    /// Runs `body` on the packet of `index` without copying it, if it is still held.
    func withPacket(_ index: Int64, _ body: (Entry) -> Void) {
        guard index >= 0, index < nextIndex else { return }
        let i = Int(index % Int64(slots.count))
        if slots[i].index == index { body(slots[i]) }
    }
}
