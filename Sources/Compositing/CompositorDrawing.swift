import Codecs
import Media
import Layout

/// An image drawn over every tile (a logo or "live" bug), blended by its own alpha times `opacity`.
public struct Watermark: Sendable {
    public var image: AlphaPicture
    /// In canvas pixels; the image is fitted into it (contain leaves the rest of the rect untouched).
    public var rect: Rect
    /// 0…1, multiplied with the image's alpha.
    public var opacity: Double
    public var fit: FitMode

    public init(image: AlphaPicture, rect: Rect, opacity: Double = 1, fit: FitMode = .contain) {
        self.image = image
        self.rect = rect
        self.opacity = opacity
        self.fit = fit
    }
}

/// What a tile needs from the compositor to draw itself (copied out so drawing can write the canvas or
/// the scratch frame without overlapping access to the compositor).
struct TileStyle {
    var background: YUVColor
    var placeholder: YUVColor
    var speakingBorder: TileBorder
    var placeholderImage: AlphaPicture?
}

/// An image scaled to its destination rect and cut to the canvas: exactly the canvas pixels it covers
/// (clipped, even-aligned), with its alpha at luma and chroma resolution. Made once per destination.
struct ScaledImage {
    let crop: Rect
    let dest: Rect
    let canvasWidth: Int
    let canvasHeight: Int
    /// Canvas position of `picture`'s top-left pixel (even).
    let x: Int
    let y: Int
    let picture: VideoFrame
    let alpha: [UInt8]
    let chromaAlpha: [UInt8]

    /// nil when nothing of `dest` is on the canvas.
    init?(image: AlphaPicture, crop: Rect, dest: Rect, canvasWidth: Int, canvasHeight: Int) {
        let region = VideoCompositor.region(dest, canvasWidth: canvasWidth, canvasHeight: canvasHeight)
        guard !region.isEmpty, !crop.isEmpty else { return nil }
        // Scale into a region-sized picture: dest moved so the region's corner is the picture's origin.
        // The region's origin is even, so the picture's chroma lines up with the canvas's.
        let local = Rect(x: dest.x - region.x, y: dest.y - region.y, width: dest.width, height: dest.height)
        var picture = VideoFrame(width: region.width, height: region.height)
        ImageOps.scale(image.picture, crop: crop, into: &picture, at: local)
        var alpha = [UInt8](repeating: 0, count: region.width * region.height)
        ImageOps.scalePlane(
            image.alpha, width: image.width, height: image.height, crop: crop,
            into: &alpha, width: region.width, height: region.height, at: local)
        self.crop = crop
        self.dest = dest
        self.canvasWidth = canvasWidth
        self.canvasHeight = canvasHeight
        x = region.x
        y = region.y
        self.picture = picture
        self.alpha = alpha
        chromaAlpha = ImageOps.chromaAlpha(alpha, width: region.width, height: region.height)
    }

    func fits(crop: Rect, dest: Rect, canvasWidth: Int, canvasHeight: Int) -> Bool {
        self.crop == crop && self.dest == dest && self.canvasWidth == canvasWidth && self.canvasHeight == canvasHeight
    }
}

extension VideoCompositor {
    /// Most distinct placeholder rects kept scaled; beyond this the cache starts over (a layout change).
    static let placeholderCacheLimit = 8

    /// Draws one tile opaquely into `target` (the canvas, or the scratch frame for alpha tiles):
    /// picture (or placeholder), then the tile's border, then the speaking indicator of a placeholder.
    /// Always repaints the tile's whole clipped, even-aligned region.
    static func draw(
        _ tile: Tile, style: TileStyle, into target: inout VideoFrame,
        placeholderCache: inout [Rect: ScaledImage], scaler: inout BilinearScaler,
        scalings: inout Int
    ) {
        var drewPicture = false
        if let picture = tile.picture {
            let (crop, dest) = geometry(
                sourceWidth: picture.width, sourceHeight: picture.height, rect: tile.rect, fit: tile.fit)
            if !crop.isEmpty, !dest.isEmpty {
                if dest != tile.rect {
                    ImageOps.fill(&target, rect: tile.rect, color: style.background)
                }
                // The scaler cuts the part of dest beyond the canvas and takes the matching part of crop. A sliver
                // of a tile hanging over the edge can map to no source pixels at all, and libyuv refuses sources
                // wider or taller than 32768: either way the tile is painted as bars, because the background below
                // an opaque tile is not painted (UncoveredArea) and old pixels would show.
                if !scaler.scale(picture, crop: crop, into: &target, at: dest) {
                    ImageOps.fill(&target, rect: tile.rect, color: style.background)
                }
                drewPicture = true
            }
        }
        if !drewPicture {
            ImageOps.fill(&target, rect: tile.rect, color: style.placeholder)
            if let image = style.placeholderImage {
                let (crop, dest) = geometry(
                    sourceWidth: image.width, sourceHeight: image.height, rect: tile.rect, fit: .contain)
                if placeholderCache[dest] == nil, placeholderCache.count >= placeholderCacheLimit {
                    placeholderCache.removeAll(keepingCapacity: true)
                }
                drawImage(
                    image, crop: crop, dest: dest, opacity: 1, cache: &placeholderCache[dest],
                    into: &target, scalings: &scalings)
            }
        }
        if let border = tile.border {
            drawBorder(border, rect: tile.rect, into: &target)
        }
        let shown = region(tile.rect, canvasWidth: target.width, canvasHeight: target.height)
        if let label = drewPicture ? tile.label : (tile.card ?? tile.label), let at = label.origin(in: shown) {
            ImageOps.blend(
                label.picture, alpha: label.alpha, chromaAlpha: label.chromaAlpha, opacity: 1, into: &target,
                x: at.x, y: at.y)
        }
        if !drewPicture, tile.speaking {
            drawBorder(style.speakingBorder, rect: tile.rect, into: &target)
        }
    }

    /// A frame `border.width` (floored to even) pixels wide inside `rect`'s even-aligned edge, as four fills.
    static func drawBorder(_ border: TileBorder, rect: Rect, into target: inout VideoFrame) {
        guard rect.isSane else { return }
        let r = rect.evenAligned
        let w = min(border.width, 1 << 16) & ~1
        guard w > 0, !r.isEmpty else { return }
        if 2 * w >= r.width || 2 * w >= r.height {
            ImageOps.fill(&target, rect: r, color: border.color)
            return
        }
        ImageOps.fill(&target, rect: Rect(x: r.x, y: r.y, width: r.width, height: w), color: border.color)
        ImageOps.fill(&target, rect: Rect(x: r.x, y: r.maxY - w, width: r.width, height: w), color: border.color)
        ImageOps.fill(&target, rect: Rect(x: r.x, y: r.y + w, width: w, height: r.height - 2 * w), color: border.color)
        ImageOps.fill(
            &target, rect: Rect(x: r.maxX - w, y: r.y + w, width: w, height: r.height - 2 * w), color: border.color)
    }

    /// Blends `image` (its `crop`, scaled to `dest`) into `target` by its alpha × `opacity`, scaling only
    /// when `cache` does not already hold this crop at this destination.
    static func drawImage(
        _ image: AlphaPicture, crop: Rect, dest: Rect, opacity: Double, cache: inout ScaledImage?,
        into target: inout VideoFrame, scalings: inout Int
    ) {
        guard opacity > 0, !crop.isEmpty, !dest.isEmpty else { return }
        if !(cache?.fits(crop: crop, dest: dest, canvasWidth: target.width, canvasHeight: target.height) ?? false) {
            cache = ScaledImage(
                image: image, crop: crop, dest: dest, canvasWidth: target.width, canvasHeight: target.height)
            if cache != nil { scalings += 1 }
        }
        guard let scaled = cache else { return }
        ImageOps.blend(
            scaled.picture, alpha: scaled.alpha, chromaAlpha: scaled.chromaAlpha, opacity: opacity,
            into: &target, x: scaled.x, y: scaled.y)
    }

    /// Whether two images are the same one (same planes in memory), so re-assigning an unchanged image,
    /// or changing only a watermark's opacity, keeps the scaled copies. Planes are immutable `let` arrays,
    /// so equal storage means equal pixels; different storage counts as a new image (scaled once more).
    static func sameImage(_ a: AlphaPicture?, _ b: AlphaPicture?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case let (a?, b?):
            return a.width == b.width && a.height == b.height
                && storage(a.picture.y) == storage(b.picture.y) && storage(a.picture.u) == storage(b.picture.u)
                && storage(a.picture.v) == storage(b.picture.v) && storage(a.alpha) == storage(b.alpha)
        default: return false
        }
    }

    /// The address of an array's storage, as a number (compared, never dereferenced).
    private static func storage(_ array: [UInt8]) -> UInt {
        array.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
    }
}
