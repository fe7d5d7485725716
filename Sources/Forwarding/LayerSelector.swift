/// Which simulcast layer each consumer of a sender's video takes (docs/forwarding.md, "Simulcast"): the mixer the
/// smallest picture that covers the tile it paints, each receiver's slots the largest that fits both the size the
/// receiver wants and what its estimated bandwidth leaves, switching up only with room to spare. Pure.
public enum LayerSelector {
    /// One layer as the selector sees it; `width`/`height` 0 while no keyframe told its size.
    public struct Layer: Sendable, Equatable {
        public var width: Int
        public var height: Int
        public var bitrateBps: Int
        /// Whether it can be had: packets are arriving, or Cohost paused it at the sender and can resume it.
        public var available: Bool

        public init(width: Int, height: Int, bitrateBps: Int, available: Bool) {
            self.width = width
            self.height = height
            self.bitrateBps = bitrateBps
            self.available = available
        }

        var area: Int { width * height }
        var sized: Bool { width > 0 && height > 0 }
    }

    /// A layer above the current one is taken only with this share of its rate to spare (percent), so a receiver
    /// near its limit does not flap between two layers.
    public static let upswitchMarginPercent = 15

    /// The layer the mixer decodes for a tile of `width`×`height`: the smallest available one whose picture covers
    /// the tile, in both dimensions when `bothDimensions` (fit `cover` and `stretch` crop or scale both) or in one
    /// (fit `contain`), else the largest available one. Before any size is known, the first available layer; nil
    /// when none is available.
    public static func forTile(_ layers: [Layer], width: Int, height: Int, bothDimensions: Bool) -> Int? {
        let sized = layers.indices.filter { layers[$0].available && layers[$0].sized }
        guard !sized.isEmpty else { return layers.firstIndex(where: \.available) }
        let ordered = sized.sorted { layers[$0].area < layers[$1].area }
        let covering = ordered.first { i in
            let l = layers[i]
            return bothDimensions ? l.width >= width && l.height >= height : l.width >= width || l.height >= height
        }
        return covering ?? ordered.last
    }

    /// The layers of a receiver's slots: for each slot in order, the largest available layer no larger than what
    /// covers the slot's wanted size (`maxWidth`/`maxHeight`, nil for no limit) whose rate fits what is left of
    /// `budgetBps` (nil: no estimate, nothing limits), a layer above the slot's current one only with
    /// `upswitchMarginPercent` to spare. nil for a slot whose smallest layer does not fit: it is paused. `current[i]`
    /// is slot i's layer now (nil when paused or new). Reuses `chosen`'s storage.
    public static func forSlots(
        _ slots: [SlotDemand], budgetBps: Int?, into chosen: inout [Int?]
    ) {
        chosen.removeAll(keepingCapacity: true)
        var left = budgetBps ?? .max
        for slot in slots {
            let pick = forSlot(slot, leftBps: left, limited: budgetBps != nil)
            if let pick, budgetBps != nil { left -= slot.layers[pick].bitrateBps }
            chosen.append(pick)
        }
    }

    /// One slot's wish: the layers of the stream it shows, its current one and the size the receiver wants.
    public struct SlotDemand: Sendable, Equatable {
        public var layers: [Layer]
        public var current: Int?
        public var maxWidth: Int?
        public var maxHeight: Int?

        public init(layers: [Layer], current: Int?, maxWidth: Int? = nil, maxHeight: Int? = nil) {
            self.layers = layers
            self.current = current
            self.maxWidth = maxWidth
            self.maxHeight = maxHeight
        }
    }

    static func forSlot(_ slot: SlotDemand, leftBps: Int, limited: Bool) -> Int? {
        let layers = slot.layers
        var ordered = layers.indices.filter { layers[$0].available }
        guard !ordered.isEmpty else { return nil }
        // Unknown sizes sort first: such a layer is taken only when nothing else is known.
        ordered.sort { layers[$0].area < layers[$1].area }
        var top = ordered.count - 1
        if slot.maxWidth != nil || slot.maxHeight != nil {
            let w = slot.maxWidth ?? 0
            let h = slot.maxHeight ?? 0
            if let covering = ordered.firstIndex(where: {
                layers[$0].sized && layers[$0].width >= w && layers[$0].height >= h
            }) {
                top = covering
            }
        }
        let currentRank = slot.current.flatMap { ordered.firstIndex(of: $0) }
        for rank in stride(from: top, through: 0, by: -1) {
            let rate = layers[ordered[rank]].bitrateBps
            guard limited else { return ordered[rank] }
            let up = currentRank.map { rank > $0 } ?? true
            let need = up ? rate + rate * upswitchMarginPercent / 100 : rate
            if need <= leftBps { return ordered[rank] }
        }
        return nil
    }
}
