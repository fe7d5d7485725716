import Media

/// One participant's rectangle on the canvas for one tick, ready for the compositor.
public struct Placement: Equatable, Sendable {
    public var userId: String
    /// On the canvas, even-aligned, never empty.
    public var rect: Rect
    public var z: Int
    public var fit: FitMode
    /// Opacity, 0…1; 1 (opaque) unless a custom region says otherwise.
    public var alpha: Double
    /// Frame drawn inside the rect's edge; only custom regions have one.
    public var border: TileBorder?
    /// The camera, or the screen share (a custom region's choice).
    public var source: RegionSource
    /// The tile's name label (the region's, else the layout's); nil: none given, `LabelSpec.none`: none wanted.
    public var label: LabelSpec?

    public init(
        userId: String, rect: Rect, z: Int, fit: FitMode, alpha: Double = 1, border: TileBorder? = nil,
        source: RegionSource = .camera, label: LabelSpec? = nil
    ) {
        self.source = source
        self.label = label
        self.userId = userId
        self.rect = rect
        self.z = z
        self.fit = fit
        self.alpha = alpha
        self.border = border
    }
}

/// Turns a layout and the present participants into placements. Pure: no state, no allocation beyond the result.
public enum LayoutEngine {
    /// The placements to draw, bottom first.
    ///
    /// - custom: one placement per region whose user is present, in region order (a user may have several
    ///   regions), with the region's z, fit, alpha and border; a present user without a region is heard, not seen.
    /// - grid: one tile per distinct participant in join order, `columns = ceil(sqrt(n))`,
    ///   `rows = ceil(n / columns)`, filled row by row. Cell edges sit at `floorEven(i × canvas / count)`
    ///   (the last edge at the canvas edge floored to even), so cells abut without gaps and differ by at
    ///   most 2 px. An incomplete last row stays left-aligned. Grid tiles use fit `.contain`, z 0.
    /// - pip (the mobile SDK's big/small window): the anchor (`effectiveAnchor`) fills the whole canvas, z 0,
    ///   fit `.cover`. Every other distinct participant, in join order, gets a guest tile, z 1, fit `.cover`:
    ///   tile `floorEven(W/4) × floorEven(H/4)`, margin `m = floorEven(max(2, H/45))` (16 px on 720p, 8 on 360p).
    ///   The first guest sits in the bottom-right corner inset by `m` (its right edge at `floorEven(W − m)`,
    ///   its bottom at `floorEven(H − m)`), each next one above the previous with an `m` gap; when the next tile
    ///   would start above `y = m` a new column begins to the left (again an `m` gap), and when a new column
    ///   would start left of `x = m` the remaining guests are heard, not seen. On 1280×720 the tiles are
    ///   320×180 at x 944, 608, 272 and y 524, 328, 132 (3 × 3 = 9 guests at most); on 640×360, 160×90 at
    ///   x 472, 304, 136 and y 262, 164, 66.
    ///
    /// Every rect is clipped to the canvas and snapped to even pixels (origin and far edge floored to even);
    /// empty ones are dropped. The result is sorted by z ascending, ties in region order (stable).
    ///
    /// - Parameter anchor: the room's fallback anchor for pip (its configured anchor, or the first admin who
    ///   joined); see `effectiveAnchor`. Ignored by the other modes.
    public static func placements(
        for layout: Layout, participants joinOrder: [String],
        canvasWidth: Int, canvasHeight: Int, anchor: String? = nil
    ) -> [Placement] {
        guard canvasWidth > 0, canvasHeight > 0 else { return [] }
        var placed: [Placement]
        switch layout.mode {
        case .custom:
            placed = custom(layout.regions, present: joinOrder, canvasWidth: canvasWidth, canvasHeight: canvasHeight)
        case .grid:
            placed = grid(joinOrder, canvasWidth: canvasWidth, canvasHeight: canvasHeight)
        case .pip:
            let users = distinct(joinOrder)
            guard let main = effectiveAnchor(for: layout, participants: users, anchor: anchor) else { return [] }
            placed = pip(
                anchor: main, others: users.filter { $0 != main }, canvasWidth: canvasWidth, canvasHeight: canvasHeight)
        }
        // A custom region's own label, else the layout's ("none" stays: it hides the card's name too).
        for i in placed.indices where placed[i].label == nil { placed[i].label = layout.label }
        return placed
    }

    /// Who fills the canvas in pip mode: `layout.anchor` if that user is present, else the `anchor` argument
    /// if present, else the first participant in join order; nil with nobody present. Computed for every
    /// mode, so the room can report who would be the anchor.
    public static func effectiveAnchor(
        for layout: Layout, participants joinOrder: [String], anchor: String? = nil
    ) -> String? {
        if let wanted = layout.anchor, joinOrder.contains(wanted) { return wanted }
        if let fallback = anchor, joinOrder.contains(fallback) { return fallback }
        return joinOrder.first
    }

    /// Rows and columns of the grid for `n` tiles.
    public static func gridShape(count n: Int) -> (columns: Int, rows: Int) {
        guard n > 0 else { return (0, 0) }
        var columns = Int(Double(n).squareRoot().rounded(.up))
        // Guard against floating-point error either way on perfect squares.
        while columns * columns < n { columns += 1 }
        while columns > 1, (columns - 1) * (columns - 1) >= n { columns -= 1 }
        return (columns, (n + columns - 1) / columns)
    }

    private static func custom(
        _ regions: [Region], present: [String], canvasWidth: Int, canvasHeight: Int
    ) -> [Placement] {
        let present = Set(present)
        var indexed: [(index: Int, placement: Placement)] = []
        for (i, region) in regions.enumerated() where present.contains(region.userId) {
            let rect = LayoutRules.placedRect(region.rect, canvasWidth: canvasWidth, canvasHeight: canvasHeight)
            guard !rect.isEmpty else { continue }
            indexed.append(
                (
                    i,
                    Placement(
                        userId: region.userId, rect: rect, z: region.z, fit: region.fit,
                        alpha: region.alpha, border: region.tileBorder, source: region.source,
                        label: region.label)
                ))
        }
        // Explicit tie-break on the region index: stable whatever the sort algorithm.
        indexed.sort { ($0.placement.z, $0.index) < ($1.placement.z, $1.index) }
        return indexed.map(\.placement)
    }

    /// Join order without repeats (a user listed twice gets one tile, at the first position).
    static func distinct(_ joinOrder: [String]) -> [String] {
        var seen = Set<String>()
        return joinOrder.filter { seen.insert($0).inserted }
    }

    private static func grid(_ joinOrder: [String], canvasWidth: Int, canvasHeight: Int) -> [Placement] {
        let users = distinct(joinOrder)
        let (columns, rows) = gridShape(count: users.count)
        guard columns > 0 else { return [] }
        func edge(_ i: Int, of count: Int, size: Int) -> Int { (i * size / count) & ~1 }
        var result: [Placement] = []
        result.reserveCapacity(users.count)
        for (i, user) in users.enumerated() {
            let col = i % columns, row = i / columns
            let x0 = edge(col, of: columns, size: canvasWidth), x1 = edge(col + 1, of: columns, size: canvasWidth)
            let y0 = edge(row, of: rows, size: canvasHeight), y1 = edge(row + 1, of: rows, size: canvasHeight)
            let rect = Rect(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
            guard !rect.isEmpty else { continue }
            result.append(Placement(userId: user, rect: rect, z: 0, fit: .contain))
        }
        return result
    }
}
