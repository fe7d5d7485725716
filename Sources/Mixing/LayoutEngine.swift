import Media

/// One participant's rectangle on the canvas for one tick, ready for the compositor.
public struct Placement: Equatable, Sendable {
    public var userId: String
    /// On the canvas, even-aligned, never empty.
    public var rect: Rect
    public var z: Int
    public var fit: FitMode

    public init(userId: String, rect: Rect, z: Int, fit: FitMode) {
        self.userId = userId
        self.rect = rect
        self.z = z
        self.fit = fit
    }
}

/// Turns a layout and the present participants into placements. Pure: no state, no allocation beyond the result.
public enum LayoutEngine {
    /// The placements to draw, bottom first.
    ///
    /// - custom: one placement per region whose user is present, in region order (a user may have several
    ///   regions); a present user without a region is heard, not seen.
    /// - grid: one tile per distinct participant in join order, `columns = ceil(sqrt(n))`,
    ///   `rows = ceil(n / columns)`, filled row by row. Cell edges sit at `floorEven(i × canvas / count)`
    ///   (the last edge at the canvas edge floored to even), so cells abut without gaps and differ by at
    ///   most 2 px. An incomplete last row stays left-aligned. Grid tiles use fit `.contain`, z 0.
    ///
    /// Every rect is clipped to the canvas and snapped to even pixels (origin and far edge floored to even);
    /// empty ones are dropped. The result is sorted by z ascending, ties in region order (stable).
    public static func placements(for layout: Layout, participants joinOrder: [String],
                                  canvasWidth: Int, canvasHeight: Int) -> [Placement] {
        guard canvasWidth > 0, canvasHeight > 0 else { return [] }
        switch layout.mode {
        case .custom:
            return custom(layout.regions, present: joinOrder, canvasWidth: canvasWidth, canvasHeight: canvasHeight)
        case .grid:
            return grid(joinOrder, canvasWidth: canvasWidth, canvasHeight: canvasHeight)
        }
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

    private static func custom(_ regions: [Region], present: [String], canvasWidth: Int, canvasHeight: Int) -> [Placement] {
        let present = Set(present)
        var indexed: [(index: Int, placement: Placement)] = []
        for (i, region) in regions.enumerated() where present.contains(region.userId) {
            let rect = LayoutRules.placedRect(region.rect, canvasWidth: canvasWidth, canvasHeight: canvasHeight)
            guard !rect.isEmpty else { continue }
            indexed.append((i, Placement(userId: region.userId, rect: rect, z: region.z, fit: region.fit)))
        }
        // Explicit tie-break on the region index: stable whatever the sort algorithm.
        indexed.sort { ($0.placement.z, $0.index) < ($1.placement.z, $1.index) }
        return indexed.map(\.placement)
    }

    private static func grid(_ joinOrder: [String], canvasWidth: Int, canvasHeight: Int) -> [Placement] {
        var seen = Set<String>()
        let users = joinOrder.filter { seen.insert($0).inserted }
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
