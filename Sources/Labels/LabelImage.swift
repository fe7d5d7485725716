import Media

/// A rendered label: its box and text as I420 with a full-resolution alpha plane, ready to blend onto a canvas.
public struct LabelImage: Sendable {
    /// Straight alpha; even width and height.
    public let image: AlphaPicture
    public var width: Int { image.width }
    public var height: Int { image.height }
    /// The bounding box of the text's inked pixels inside the image; empty for text with no ink.
    public let inkBox: Rect

    init(image: AlphaPicture, inkBox: Rect) {
        self.image = image
        self.inkBox = inkBox
    }
}
