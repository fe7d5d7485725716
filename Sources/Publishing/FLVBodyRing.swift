/// Tag bodies reused round a ring, so building a tag per AAC frame or per canvas allocates nothing once the
/// ring has warmed up (hot path: ≈47 audio tags and `fps` video tags a second per room).
///
/// A tag travels to the outputs' threads through their queues, so its body must not be overwritten while any
/// of them still holds it. The ring does not need to know: each slot keeps one reference to the body it last
/// built, and when the ring comes round to it again the body is emptied *in place only if that reference is
/// the last one* (Swift's copy-on-write: `removeAll(keepingCapacity:)` on shared storage leaves the other
/// holders' bytes alone and gives this slot new storage). A slow output therefore costs an allocation, never
/// a corrupted tag. With `slots` larger than the tags normally in flight (interleaver wait plus what an output
/// has not written yet), the storage of the oldest slot is free again by the time it is needed.
public struct FLVBodyRing: Sendable {
    private var slots: [[UInt8]]
    private var next = 0
    private let reserve: Int

    /// `reserve` bytes are set aside in each body the first time it is built (grown later if a tag needs more).
    public init(slots: Int, reserve: Int) {
        self.slots = Array(repeating: [], count: max(1, slots))
        self.reserve = reserve
    }

    public var count: Int { slots.count }

    /// Builds the next body with `fill` (it starts empty) and returns it; the ring keeps a reference to reuse it.
    public mutating func build(_ fill: (inout [UInt8]) -> Void) -> [UInt8] {
        var body: [UInt8] = []
        // Moved out of the slot (not copied), so the slot's own reference does not count as a holder.
        swap(&body, &slots[next])
        body.removeAll(keepingCapacity: true)
        if body.capacity < reserve { body.reserveCapacity(reserve) }
        fill(&body)
        slots[next] = body
        next = next + 1 == slots.count ? 0 : next + 1
        return body
    }
}
