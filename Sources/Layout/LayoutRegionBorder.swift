import Media

/// A region's `border` as it travels in JSON: `{"color":"#RRGGBB","width":N}`.
///
/// Keeps the colour text as given (BT.601 YUV does not convert back to the same hex), so `GET` of a room
/// returns exactly what was `PUT`. The rules (`#RRGGBB` or `RRGGBB`, width even and 2…64) are checked with
/// the rest of the region by decoding and by `Layout.validate`.
public struct RegionBorder: Codable, Equatable, Sendable {
    /// Allowed widths in canvas pixels; must also be even (I420 chroma covers 2×2 pixels).
    public static let widthRange = 2...64

    /// `#RRGGBB` as given.
    public var color: String
    /// In canvas pixels, drawn inward from the tile's edge.
    public var width: Int

    public init(color: String, width: Int) {
        self.color = color
        self.width = width
    }

    /// The border as the compositor draws it; nil when `color` is not a hex colour.
    public var tileBorder: TileBorder? {
        YUVColor(hex: color).map { TileBorder(color: $0, width: width) }
    }
}
