/// Which stream a participant's video is, among those a room forwards.
public enum StreamSource: String, Sendable, Codable, CaseIterable {
    case camera
    case screen
}

/// One participant's stream, as slots and subscriptions name it.
public struct StreamKey: Hashable, Sendable, Codable {
    public var userId: String
    public var source: StreamSource

    public init(userId: String, source: StreamSource) {
        self.userId = userId
        self.source = source
    }
}

/// Decides what each of a receiver's slots shows (docs/forwarding.md): the receiver's own choices first, then the
/// other participants' streams in the layout's order, the most recent speakers first when there are more streams
/// than slots (last-N), never the receiver's own. A stream already in a slot stays in it while it is still chosen,
/// so a new speaker does not reshuffle the others. A camera turned off keeps its slot (the receiver keeps its tile,
/// with a camera-off card; the forwarding sends nothing for it) unless cameras that are on need the room. Pure.
public enum SlotAllocator {
    /// A stream that could be forwarded: who and which, the codec it carries (`ForwardCodec.key`), when its owner
    /// last spoke (nil: never) and whether it is on (a camera turned off is not: it yields to those that are).
    public struct Candidate: Sendable, Equatable {
        public var key: StreamKey
        public var codec: String
        public var lastSpokeMs: Int64?
        public var available: Bool

        public init(key: StreamKey, codec: String, lastSpokeMs: Int64? = nil, available: Bool = true) {
            self.key = key
            self.codec = codec
            self.lastSpokeMs = lastSpokeMs
            self.available = available
        }
    }

    /// One receive slot: its `a=mid` and the codecs its line accepts.
    public struct Slot: Sendable, Equatable {
        public var mid: String
        public var accepts: Set<String>

        public init(mid: String, accepts: Set<String>) {
            self.mid = mid
            self.accepts = accepts
        }
    }

    public struct Allocation: Sendable, Equatable {
        /// Per slot, in the slots' order: the stream it shows, nil for none.
        public var shown: [StreamKey?]
        /// Streams no slot of this receiver can carry (no codec in common).
        public var unforwardable: [StreamKey]
    }

    /// `candidates` in the layout's order; `chosen` the receiver's subscriptions by mid; `previous` what each
    /// slot showed until now (same order as `slots`).
    public static func allocate(
        receiver: String, slots: [Slot], candidates: [Candidate], chosen: [String: StreamKey],
        previous: [StreamKey?]
    ) -> Allocation {
        let eligible = candidates.filter { $0.key.userId != receiver }
        let unforwardable = candidates.filter { c in
            c.key.userId != receiver && !slots.contains { $0.accepts.contains(c.codec) }
        }.map(\.key)
        var shown = [StreamKey?](repeating: nil, count: slots.count)
        var taken = Set<StreamKey>()
        var automatic: [Int] = []
        for (i, slot) in slots.enumerated() {
            guard let key = chosen[slot.mid] else {
                automatic.append(i)
                continue
            }
            if let c = eligible.first(where: { $0.key == key }), slot.accepts.contains(c.codec) {
                shown[i] = key
                taken.insert(key)
            }
        }
        var pool = eligible.filter { c in
            !taken.contains(c.key) && automatic.contains { slots[$0].accepts.contains(c.codec) }
        }
        if pool.count > automatic.count {
            // Last-N: the most recent speakers, shown in the layout's order.
            let ranked = pool.indices.sorted { a, b in
                if pool[a].available != pool[b].available { return pool[a].available }
                let sa = pool[a].lastSpokeMs ?? .min, sb = pool[b].lastSpokeMs ?? .min
                return sa != sb ? sa > sb : a < b
            }
            let keep = Set(ranked.prefix(automatic.count))
            pool = pool.indices.filter(keep.contains).map { pool[$0] }
        }
        var free = automatic
        // Streams keep the slot they are in.
        for c in pool {
            guard let at = free.first(where: { i in i < previous.count && previous[i] == c.key }),
                slots[at].accepts.contains(c.codec)
            else { continue }
            shown[at] = c.key
            taken.insert(c.key)
            free.removeAll { $0 == at }
        }
        for c in pool where !taken.contains(c.key) {
            guard let at = free.first(where: { slots[$0].accepts.contains(c.codec) }) else { continue }
            shown[at] = c.key
            taken.insert(c.key)
            free.removeAll { $0 == at }
        }
        return Allocation(shown: shown, unforwardable: unforwardable)
    }
}
