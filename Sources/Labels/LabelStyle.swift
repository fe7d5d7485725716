import Media

/// How a label is drawn: the font's pixel size, the text colour and the box behind it.
public struct LabelStyle: Hashable, Sendable {
    /// Font pixel sizes a label may use; `FontSet.render` clamps anything outside.
    public static let sizes = 8...128

    public var size: Int
    public var color: RGBA
    public var background: RGBA

    public init(
        size: Int = 24, color: RGBA = RGBA(r: 255, g: 255, b: 255, a: 255),
        background: RGBA = RGBA(r: 0, g: 0, b: 0, a: 0x99)
    ) {
        self.size = size
        self.color = color
        self.background = background
    }
}
