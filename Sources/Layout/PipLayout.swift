import Media

/// The picture-in-picture geometry (documented with `LayoutEngine.placements`).
extension LayoutEngine {
    /// The guest slots of a pip canvas in fill order: bottom-right first, up the column, then the next column
    /// to the left. At most 9 (a tile is a quarter of the canvas each way, so 4 tiles plus margins never fit),
    /// empty on a canvas too small for a 2×2 tile.
    static func pipSlots(canvasWidth: Int, canvasHeight: Int) -> [Rect] {
        let width = (canvasWidth / 4) & ~1, height = (canvasHeight / 4) & ~1
        let margin = max(2, canvasHeight / 45) & ~1
        guard width > 0, height > 0 else { return [] }
        let right = (canvasWidth - margin) & ~1, bottom = (canvasHeight - margin) & ~1
        var slots: [Rect] = []
        var x = right - width
        while x >= margin {
            var y = bottom - height
            while y >= margin {
                slots.append(Rect(x: x, y: y, width: width, height: height))
                y -= height + margin
            }
            x -= width + margin
        }
        return slots
    }

    /// `others` are distinct and exclude `anchor`.
    static func pip(anchor: String, others: [String], canvasWidth: Int, canvasHeight: Int) -> [Placement] {
        let full = LayoutRules.placedRect(
            Rect(x: 0, y: 0, width: canvasWidth, height: canvasHeight),
            canvasWidth: canvasWidth, canvasHeight: canvasHeight)
        guard !full.isEmpty else { return [] }
        var result = [Placement(userId: anchor, rect: full, z: 0, fit: .cover)]
        // zip stops at the shorter list: guests beyond the last slot are heard, not seen.
        for (user, slot) in zip(others, pipSlots(canvasWidth: canvasWidth, canvasHeight: canvasHeight)) {
            result.append(Placement(userId: user, rect: slot, z: 1, fit: .cover))
        }
        return result
    }
}
