import Codecs
import Media
import Layout

/// One thing to draw this tick: a participant's latest frame (or nil for the placeholder) at a canvas rect.
public struct Tile: Sendable {
    /// In canvas pixels; may hang over the canvas edge (the overhang is cut, not squeezed).
    public var rect: Rect
    public var fit: FitMode
    /// nil → the placeholder: its colour, plus the compositor's placeholder image if one is set
    /// (no video yet, or video stalled too long). A participant's picture is the decoder's own buffer, drawn
    /// without a copy in between; holding the tile keeps it alive and unchanged.
    public var picture: Picture?
    /// Opacity 0…1: the whole scaled tile (picture, bars, border) is blended over what is below.
    /// 0 (or NaN) draws nothing; values outside 0…1 are clamped.
    public var alpha: Double
    /// A solid frame drawn inside the tile's rect, over the picture.
    public var border: TileBorder?
    /// The participant is talking: a placeholder tile shows the compositor's `speakingBorder`.
    public var speaking: Bool
    /// The name label drawn over the picture at its position.
    public var label: TileLabel?
    /// A card: the name drawn centred on the placeholder when there is no picture (camera off, no video yet);
    /// the label is not drawn then.
    public var card: TileLabel?

    public init(
        rect: Rect, fit: FitMode, picture: Picture?, alpha: Double = 1, border: TileBorder? = nil,
        speaking: Bool = false, label: TileLabel? = nil, card: TileLabel? = nil
    ) {
        self.label = label
        self.card = card
        self.rect = rect
        self.fit = fit
        self.picture = picture
        self.alpha = alpha
        self.border = border
        self.speaking = speaking
    }

    /// A tile showing a `VideoFrame` (nil: the placeholder).
    public init(
        rect: Rect, fit: FitMode, frame: VideoFrame?, alpha: Double = 1, border: TileBorder? = nil,
        speaking: Bool = false, label: TileLabel? = nil, card: TileLabel? = nil
    ) {
        self.init(
            rect: rect, fit: fit, picture: frame.map(Picture.init), alpha: alpha, border: border, speaking: speaking,
            label: label, card: card)
    }
}

/// Owns the canvas and composes tiles onto it each tick (tiles scaled by `BilinearScaler`, images by libyuv
/// through `ImageOps`).
///
/// Per tick: background colour (only where no opaque tile paints), background image (cover, by its alpha),
/// tiles in order (later = on top; a tile wholly covered by one opaque tile above it is skipped), watermark
/// (by its alpha × opacity).
///
/// Allocates nothing per frame in steady state: `compose` writes into the canvas planes in place; tiles with
/// alpha < 1 are drawn into one canvas-sized scratch frame (allocated on first need, counted in
/// `scratchAllocations`) and blended from there; images are scaled once per size/position change and cached
/// (counted in `imageScalings`). That holds while nobody else keeps a copy of `canvas` across ticks; a held
/// copy shares the planes, so the next `compose` would copy them first (copy-on-write). Hand the canvas to
/// the encoder, then let it go. Confined to one room's queue at a time, like any value type.
public struct VideoCompositor: Sendable {
    public private(set) var canvas: VideoFrame
    public var background: YUVColor
    public var placeholder: YUVColor
    /// Drawn inside the edge of a placeholder tile whose participant is speaking (width floored to even).
    public var speakingBorder = TileBorder(color: YUVColor(r: 0x22, g: 0xC5, b: 0x5E), width: 6)

    /// Scaled to the whole canvas with cover, drawn over the background colour by its alpha.
    public var backgroundImage: AlphaPicture? {
        didSet { if !Self.sameImage(oldValue, backgroundImage) { backgroundCache = nil } }
    }
    /// Drawn over every tile.
    public var watermark: Watermark? {
        didSet { if !Self.sameImage(oldValue?.image, watermark?.image) { watermarkCache = nil } }
    }
    /// Drawn with contain, centred, on the placeholder colour of every placeholder tile.
    public var placeholderImage: AlphaPicture? {
        didSet { if !Self.sameImage(oldValue, placeholderImage) { placeholderCache.removeAll() } }
    }

    /// Tiles the last `compose` did not draw because one opaque tile above covered them entirely.
    public private(set) var skippedTiles = 0
    /// Canvas pixels the last `compose` painted with the background colour: those no opaque tile covers.
    public private(set) var backgroundPixels = 0
    /// Times the scratch frame for alpha tiles was (re)allocated; 1 after the first alpha tile, then steady.
    public private(set) var scratchAllocations = 0
    /// Times an image (background, watermark, placeholder) was scaled; grows only when one changes size,
    /// position or content.
    public private(set) var imageScalings = 0

    /// Alpha tiles are drawn here at canvas coordinates, then blended into the canvas. Starts tiny and grows
    /// to the canvas size on first use; never shrinks.
    private var scratch = VideoFrame(width: 2, height: 2)
    private var backgroundCache: ScaledImage?
    private var watermarkCache: ScaledImage?
    /// Keyed by the placeholder image's destination rect (one entry per distinct placeholder tile rect).
    private var placeholderCache: [Rect: ScaledImage] = [:]
    /// Scales the tiles' pictures (the per-frame scaling); keeps one table per size pair it has met.
    private var scaler = BilinearScaler()
    /// Where the background colour shows, kept until the opaque tiles' regions change.
    private var uncovered = UncoveredArea()
    /// Times the uncovered area was recomputed: steady while the layout is.
    public var uncoveredAreaComputations: Int { uncovered.computations }
    /// Size-pair tables the tile scaler has built: steady while the layout and the senders' sizes are.
    public var scalerTablesBuilt: Int { scaler.tablesBuilt }

    public init(width: Int, height: Int, background: YUVColor, placeholder: YUVColor) {
        canvas = VideoFrame(width: width, height: height, color: background)
        self.background = background
        self.placeholder = placeholder
    }

    private var bounds: Rect { Rect(x: 0, y: 0, width: canvas.width, height: canvas.height) }

    /// Background, background image, tiles in the given order (later = on top), watermark.
    ///
    /// cover: scale to fill the rect and crop the source centred (crop even-aligned); contain: fit inside
    /// the rect, the bars painted background (over anything below); stretch: scale to the rect.
    /// A rect partly outside the canvas is clipped; a frame with no pixels draws the placeholder.
    public mutating func compose(_ tiles: [Tile]) {
        skippedTiles = 0
        // The background colour is painted only where no opaque tile will paint over it (a full grid paints
        // none). The image, when set, is drawn over the whole canvas unless nothing of it shows: what it draws
        // under an opaque tile is painted over by that tile, so the result is the same as painting it all.
        uncovered.update(for: tiles, canvasWidth: canvas.width, canvasHeight: canvas.height)
        backgroundPixels = 0
        for rect in uncovered.rects {
            ImageOps.fill(&canvas, rect: rect, color: background)
            backgroundPixels += rect.width * rect.height
        }
        let hidden = uncovered.rects.isEmpty
        if !hidden, let image = backgroundImage {
            let (crop, dest) = Self.geometry(
                sourceWidth: image.width, sourceHeight: image.height, rect: bounds, fit: .cover)
            Self.drawImage(
                image, crop: crop, dest: dest, opacity: 1, cache: &backgroundCache,
                into: &canvas, scalings: &imageScalings)
        }
        let style = TileStyle(
            background: background, placeholder: placeholder, speakingBorder: speakingBorder,
            placeholderImage: placeholderImage)
        for index in tiles.indices {
            let tile = tiles[index]
            let alpha = Self.opacity(tile.alpha)
            guard alpha > 0, !tile.rect.isEmpty else { continue }
            let region = Self.region(tile.rect, canvasWidth: canvas.width, canvasHeight: canvas.height)
            guard !region.isEmpty else { continue }
            if Self.isOccluded(
                region, by: tiles[(index + 1)...], canvasWidth: canvas.width, canvasHeight: canvas.height)
            {
                skippedTiles += 1
                continue
            }
            if alpha >= 1 {
                Self.draw(
                    tile, style: style, into: &canvas, placeholderCache: &placeholderCache,
                    scaler: &scaler, scalings: &imageScalings)
            } else {
                if scratch.width != canvas.width || scratch.height != canvas.height {
                    scratch = VideoFrame(width: canvas.width, height: canvas.height)
                    scratchAllocations += 1
                }
                // The tile's whole region is repainted in the scratch, so stale pixels there never show.
                Self.draw(
                    tile, style: style, into: &scratch, placeholderCache: &placeholderCache,
                    scaler: &scaler, scalings: &imageScalings)
                ImageOps.blend(scratch, into: &canvas, rect: region, alpha: alpha)
            }
        }
        if let watermark {
            let image = watermark.image
            let (crop, dest) = Self.geometry(
                sourceWidth: image.width, sourceHeight: image.height,
                rect: watermark.rect, fit: watermark.fit)
            Self.drawImage(
                image, crop: crop, dest: dest, opacity: Self.opacity(watermark.opacity),
                cache: &watermarkCache, into: &canvas, scalings: &imageScalings)
        }
    }

    /// 0…1; NaN counts as 0 (invisible) so hostile values draw nothing rather than trap.
    static func opacity(_ value: Double) -> Double {
        value.isNaN ? 0 : min(1, max(0, value))
    }
}
