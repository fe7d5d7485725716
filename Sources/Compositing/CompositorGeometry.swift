import Media
import Layout

extension VideoCompositor {
    /// Pure geometry used by `compose`: the source crop and the destination rect for a `sourceWidth`×`sourceHeight`
    /// frame drawn into `rect` with `fit`. Both empty when either size is not positive.
    ///
    /// - cover: dest = rect; the crop has the rect's aspect ratio, its long side floored to even
    ///   (at least 2 px, at most the source), centred with its origin floored to even.
    /// - contain: crop = the whole source; dest has the source's aspect ratio, its short side floored to even
    ///   (at least 2 px, at most the rect), centred in rect with the offset floored to even.
    /// - stretch: crop = the whole source, dest = rect.
    /// Absurd sizes or coordinates (beyond ±2³⁰) give empty geometry too.
    public static func geometry(
        sourceWidth sw: Int, sourceHeight sh: Int, rect: Rect,
        fit: FitMode
    ) -> (crop: Rect, dest: Rect) {
        let empty = Rect(x: 0, y: 0, width: 0, height: 0)
        // Sizes beyond 2³⁰ (hostile rects) would overflow the products below: nothing to draw.
        guard sw > 0, sh > 0, sw < 1 << 30, sh < 1 << 30, rect.isSane, !rect.isEmpty else { return (empty, empty) }
        let full = Rect(x: 0, y: 0, width: sw, height: sh)
        let rw = rect.width, rh = rect.height
        switch fit {
        case .stretch:
            return (full, rect)
        case .cover:
            if sw * rh > sh * rw {
                // Source wider than the rect: keep full height, crop the sides.
                let w = evenSize(sh * rw / rh, limit: sw)
                return (Rect(x: ((sw - w) / 2) & ~1, y: 0, width: w, height: sh), rect)
            } else if sw * rh < sh * rw {
                // Source taller: keep full width, crop top and bottom.
                let h = evenSize(sw * rh / rw, limit: sh)
                return (Rect(x: 0, y: ((sh - h) / 2) & ~1, width: sw, height: h), rect)
            }
            return (full, rect)
        case .contain:
            if sw * rh > sh * rw {
                // Source wider: full rect width, bars above and below.
                let h = evenSize(rw * sh / sw, limit: rh)
                return (full, Rect(x: rect.x, y: rect.y + ((rh - h) / 2) & ~1, width: rw, height: h))
            } else if sw * rh < sh * rw {
                // Source taller: full rect height, bars left and right.
                let w = evenSize(rh * sw / sh, limit: rw)
                return (full, Rect(x: rect.x + ((rw - w) / 2) & ~1, y: rect.y, width: w, height: rh))
            }
            return (full, rect)
        }
    }

    /// `value` floored to even, kept within 2…limit (a limit below 2 wins: tiny frames stay drawable).
    private static func evenSize(_ value: Int, limit: Int) -> Int {
        min(limit, max(2, value & ~1))
    }

    /// True when one later tile with alpha 1 paints every pixel of `region` (the lower tile's clipped,
    /// even-aligned canvas area). Pure rect containment: an opaque tile always repaints its whole aligned
    /// region (picture, bars or placeholder), so nothing of the lower tile could show, not even at its edges.
    /// Allocates nothing (the tiles are walked as a slice).
    static func isOccluded(_ region: Rect, by above: ArraySlice<Tile>, canvasWidth: Int, canvasHeight: Int) -> Bool {
        for tile in above where opacity(tile.alpha) >= 1 && !tile.rect.isEmpty {
            let cover = Self.region(tile.rect, canvasWidth: canvasWidth, canvasHeight: canvasHeight)
            if cover.x <= region.x, cover.y <= region.y, cover.maxX >= region.maxX, cover.maxY >= region.maxY {
                return true
            }
        }
        return false
    }

    /// The canvas pixels a tile at `rect` paints: clipped and even-aligned as `ImageOps` draws them;
    /// empty for rects off the canvas or too absurd to compute with.
    static func region(_ rect: Rect, canvasWidth: Int, canvasHeight: Int) -> Rect {
        guard rect.isSane else { return Rect(x: 0, y: 0, width: 0, height: 0) }
        return rect.aligned(width: canvasWidth, height: canvasHeight)
    }
}
