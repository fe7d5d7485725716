import Media

/// The parts of the canvas no opaque tile paints: where the compositor must paint the background colour.
///
/// A 2×2 or 3×3 grid covers the whole canvas with tiles that each repaint their region every tick, so painting
/// the background under them first wrote every canvas pixel twice (libyuv `SetRow` ≈0.6 % of a 4-person room's
/// CPU). Coverage by several tiles together counts here, unlike the single-tile test that skips hidden tiles.
///
/// Recomputed only when the opaque regions change (a layout change, a tile's alpha crossing 1); the per-tick
/// check walks the tiles against the remembered regions and allocates nothing.
struct UncoveredArea {
    /// Disjoint rects, together exactly the canvas minus the union of the opaque regions, top to bottom.
    private(set) var rects: [Rect] = []
    /// The opaque regions `rects` was computed from, in tile order, and the canvas size.
    private var regions: [Rect] = []
    private var canvasWidth = -1
    private var canvasHeight = -1
    /// Times `rects` was recomputed (tests pin that a steady layout does not recompute).
    private(set) var computations = 0

    /// Brings `rects` up to date for `tiles` on a `canvasWidth`×`canvasHeight` canvas.
    mutating func update(for tiles: [Tile], canvasWidth: Int, canvasHeight: Int) {
        if canvasWidth == self.canvasWidth, canvasHeight == self.canvasHeight,
            Self.sameRegions(regions, tiles, canvasWidth: canvasWidth, canvasHeight: canvasHeight)
        {
            return
        }
        regions.removeAll(keepingCapacity: true)
        for tile in tiles {
            if let region = Self.opaqueRegion(tile, canvasWidth: canvasWidth, canvasHeight: canvasHeight) {
                regions.append(region)
            }
        }
        self.canvasWidth = canvasWidth
        self.canvasHeight = canvasHeight
        rects = Self.gaps(in: Rect(x: 0, y: 0, width: canvasWidth, height: canvasHeight), minus: regions)
        computations += 1
    }

    /// The canvas pixels `tile` repaints whatever lies below (nil when it is translucent or paints nothing).
    private static func opaqueRegion(_ tile: Tile, canvasWidth: Int, canvasHeight: Int) -> Rect? {
        guard VideoCompositor.opacity(tile.alpha) >= 1, !tile.rect.isEmpty else { return nil }
        let region = VideoCompositor.region(tile.rect, canvasWidth: canvasWidth, canvasHeight: canvasHeight)
        return region.isEmpty ? nil : region
    }

    private static func sameRegions(_ regions: [Rect], _ tiles: [Tile], canvasWidth: Int, canvasHeight: Int) -> Bool {
        var index = 0
        for tile in tiles {
            guard let region = opaqueRegion(tile, canvasWidth: canvasWidth, canvasHeight: canvasHeight) else {
                continue
            }
            guard index < regions.count, regions[index] == region else { return false }
            index += 1
        }
        return index == regions.count
    }

    /// `bounds` minus the union of `covers`, as disjoint rects: the bounds are cut into horizontal bands at every
    /// cover's top and bottom edge; in each band the covers spanning it are merged along x and the spaces between
    /// them kept. A gap that continues one of the band above with the same x extent is grown instead of repeated.
    static func gaps(in bounds: Rect, minus covers: [Rect]) -> [Rect] {
        let clipped = covers.map { $0.intersection(bounds) }.filter { !$0.isEmpty }
        var edges = Set([bounds.y, bounds.maxY])
        for c in clipped {
            edges.insert(c.y)
            edges.insert(c.maxY)
        }
        let ys = edges.sorted()
        var out: [Rect] = []
        var previousBand: [Int] = []  // indices into `out` of the gaps that end at the current band's top
        for (top, bottom) in zip(ys, ys.dropFirst()) {
            let spans = clipped.filter { $0.y <= top && $0.maxY >= bottom }.map { ($0.x, $0.maxX) }.sorted {
                $0.0 < $1.0
            }
            var band: [Int] = []
            var x = bounds.x
            func keep(_ from: Int, _ to: Int) {
                guard to > from else { return }
                if let i = previousBand.first(where: { out[$0].x == from && out[$0].maxX == to }) {
                    out[i].height += bottom - top
                    band.append(i)
                } else {
                    out.append(Rect(x: from, y: top, width: to - from, height: bottom - top))
                    band.append(out.count - 1)
                }
            }
            for (start, end) in spans {
                keep(x, start)
                x = max(x, end)
            }
            keep(x, bounds.maxX)
            previousBand = band
        }
        return out
    }
}
