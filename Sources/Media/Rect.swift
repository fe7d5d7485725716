/// An axis-aligned rectangle in canvas pixels.
public struct Rect: Equatable, Hashable, Sendable, CustomStringConvertible {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public var isEmpty: Bool { width <= 0 || height <= 0 }
    public var maxX: Int { x + width }
    public var maxY: Int { y + height }

    /// The part of `self` inside `other` (empty when they do not overlap).
    public func intersection(_ other: Rect) -> Rect {
        let x0 = max(x, other.x), y0 = max(y, other.y)
        let x1 = min(maxX, other.maxX), y1 = min(maxY, other.maxY)
        return Rect(x: x0, y: y0, width: max(0, x1 - x0), height: max(0, y1 - y0))
    }

    /// Even origin and size, because I420 chroma covers 2×2 luma pixels: an odd edge would
    /// bleed one chroma row or column of the neighbouring tile.
    public var evenAligned: Rect {
        let x0 = x & ~1, y0 = y & ~1
        return Rect(x: x0, y: y0, width: (maxX - x0) & ~1, height: (maxY - y0) & ~1)
    }

    /// Coordinates far beyond any frame would overflow pixel arithmetic; such rects draw nothing.
    public var isSane: Bool {
        let range = -(1 << 30)..<(1 << 30)  // not abs(): abs(Int.min) traps
        return range.contains(x) && range.contains(y) && range.contains(width) && range.contains(height)
    }

    /// `self` clipped to a `width`×`height` frame with an even origin and even size; an edge that reaches
    /// an odd frame border keeps the border, since the last chroma column/row still lies inside the plane.
    public func aligned(width: Int, height: Int) -> Rect {
        let r = intersection(Rect(x: 0, y: 0, width: width, height: height))
        guard !r.isEmpty else { return Rect(x: 0, y: 0, width: 0, height: 0) }
        let x0 = r.x & ~1, y0 = r.y & ~1
        let x1 = r.maxX == width ? width : r.maxX & ~1
        let y1 = r.maxY == height ? height : r.maxY & ~1
        return Rect(x: x0, y: y0, width: max(0, x1 - x0), height: max(0, y1 - y0))
    }

    public var description: String { "\(width)x\(height)+\(x)+\(y)" }
}
