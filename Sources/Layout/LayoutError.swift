/// Why a layout was refused: a `kind` for code to switch on and a `message` fit to show an operator
/// (the HTTP layer returns it as the 400 body's `message`).
public struct LayoutError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The rule that was broken.
    public enum Kind: String, Equatable, Sendable {
        /// Not JSON, a missing key, or a value of the wrong type.
        case malformed
        /// `mode` is not one of the known modes.
        case unknownMode
        /// `fit` is not one of the known fit modes.
        case unknownFit
        /// A region's `source` is neither camera nor screen.
        case unknownSource
        /// A region's width or height is zero or negative.
        case invalidSize
        /// More than `Layout.maxRegions` regions.
        case tooManyRegions
        /// A coordinate, size or z beyond ±`Layout.coordinateLimit`.
        case coordinateOutOfRange
        /// A userId that does not match `[A-Za-z0-9_.-]{1,64}`.
        case invalidUserId
        /// A region with no visible pixel on the canvas (only `validate(canvasWidth:canvasHeight:)`).
        case outsideCanvas
        /// The canvas itself has no pixels (only `validate(canvasWidth:canvasHeight:)`).
        case invalidCanvas
        /// A region's `alpha` outside 0.0…1.0 or not a finite number.
        case invalidAlpha
        /// A region's `border.width` that is odd or outside `RegionBorder.widthRange`.
        case invalidBorderWidth
        /// A region's `border.color` that is not `#RRGGBB`.
        case invalidBorderColor
        /// The layout's `anchor` does not match `[A-Za-z0-9_.-]{1,64}`.
        case invalidAnchor
        /// A `label` that breaks `LabelSpec`'s rules.
        case invalidLabel
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { "invalid layout: \(message)" }

    /// The same error with a location such as `regions[2]` in front of the message.
    func at(_ location: String) -> LayoutError { LayoutError(kind, "\(location): \(message)") }
}
