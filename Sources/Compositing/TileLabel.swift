import Codecs
import Media
import Layout

/// A rendered label (a name on its box, or a card's name) ready to blend: the picture, its alpha and its alpha at
/// chroma resolution, worked out once when the text is rendered, never per frame. Immutable; shared by reference
/// between ticks.
public final class TileLabel: Sendable {
    public let picture: VideoFrame
    public let alpha: [UInt8]
    let chromaAlpha: [UInt8]
    public let position: LabelPosition

    public init(image: AlphaPicture, position: LabelPosition) {
        picture = image.picture
        alpha = image.alpha
        chromaAlpha = ImageOps.chromaAlpha(image.alpha, width: image.width, height: image.height)
        self.position = position
    }

    public var width: Int { picture.width }
    public var height: Int { picture.height }

    /// The gap between a label and its tile's edge: 1/40 of the tile's shorter side, at least 4, even.
    static func margin(in rect: Rect) -> Int { max(4, min(rect.width, rect.height) / 40) & ~1 }

    /// Where the label's top-left corner goes inside `rect` (even, so its chroma lines up); nil when it does not
    /// fit with its margin.
    func origin(in rect: Rect) -> (x: Int, y: Int)? {
        let m = Self.margin(in: rect)
        guard width + 2 * m <= rect.width, height + 2 * m <= rect.height else { return nil }
        let left = rect.x + m, right = rect.maxX - m - width, middleX = rect.x + (rect.width - width) / 2
        let top = rect.y + m, bottom = rect.maxY - m - height, middleY = rect.y + (rect.height - height) / 2
        let (x, y): (Int, Int)
        switch position {
        case .topLeft: (x, y) = (left, top)
        case .top: (x, y) = (middleX, top)
        case .topRight: (x, y) = (right, top)
        case .center: (x, y) = (middleX, middleY)
        case .bottomLeft: (x, y) = (left, bottom)
        case .bottom: (x, y) = (middleX, bottom)
        case .bottomRight: (x, y) = (right, bottom)
        }
        return ((x + 1) & ~1, (y + 1) & ~1)
    }

    /// The most a label may be wide in a tile of `width` pixels (what the renderer cuts the text to).
    public static func maxWidth(inTileOf rect: Rect) -> Int { rect.width - 2 * margin(in: rect) - 2 }
}
