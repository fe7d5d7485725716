import Media

extension LayoutEngine {
    /// For each placement (bottom first, as `placements` returns them), whether it needs drawing: false when
    /// a single opaque placement later in the list (drawn over it) covers its whole rect.
    ///
    /// Opaque means `alpha == 1`, whatever the fit: a `.contain` tile paints its bars with the background,
    /// and a tile without a frame shows the placeholder, so either way its whole rect is painted. Coverage
    /// by several tiles together is not detected (drawing too much is only slower, never wrong).
    /// O(n²) on the placement count, which is small (at most 16 regions, 10 pip tiles, one tile per grid user).
    public static func visiblePlacements(_ placements: [Placement]) -> [Bool] {
        placements.indices.map { i in
            let below = placements[i].rect
            return !placements[(i + 1)...].contains { above in above.alpha >= 1 && covers(above.rect, below) }
        }
    }

    private static func covers(_ outer: Rect, _ inner: Rect) -> Bool {
        outer.x <= inner.x && outer.y <= inner.y && outer.maxX >= inner.maxX && outer.maxY >= inner.maxY
    }
}
