import Media

/// A solid frame drawn inside the edge of a tile (a region's `border`, or the speaking indicator of a
/// placeholder). Shared by the layout (which reads it from JSON) and the compositor (which draws it).
public struct TileBorder: Equatable, Sendable {
    public var color: YUVColor
    /// In canvas pixels, drawn inward from the tile's edge; even (I420 chroma covers 2×2 pixels), 2…64.
    public var width: Int

    public init(color: YUVColor, width: Int) {
        self.color = color
        self.width = width
    }
}
