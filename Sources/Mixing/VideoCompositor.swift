import Codecs
import Media

/// One thing to draw this tick: a participant's latest frame (or nil for the placeholder) at a canvas rect.
public struct Tile: Sendable {
    /// In canvas pixels; may hang over the canvas edge (the overhang is cut, not squeezed).
    public var rect: Rect
    public var fit: FitMode
    /// nil → the rect is filled with the placeholder colour (no video yet, or video stalled too long).
    public var frame: VideoFrame?

    public init(rect: Rect, fit: FitMode, frame: VideoFrame?) {
        self.rect = rect
        self.fit = fit
        self.frame = frame
    }
}

/// Owns the canvas and composes tiles onto it each tick (libyuv bilinear scaling via `ImageOps`).
///
/// Allocates nothing per frame once the canvas exists: `compose` writes into the canvas planes in place.
/// That holds while nobody else keeps a copy of `canvas` across ticks; a held copy shares the planes, so the
/// next `compose` would copy them first (copy-on-write). Hand the canvas to the encoder, then let it go.
/// Confined to one room's queue at a time, like any value type.
public struct VideoCompositor: Sendable {
    public private(set) var canvas: VideoFrame
    public var background: YUVColor
    public var placeholder: YUVColor

    public init(width: Int, height: Int, background: YUVColor, placeholder: YUVColor) {
        canvas = VideoFrame(width: width, height: height, color: background)
        self.background = background
        self.placeholder = placeholder
    }

    private var bounds: Rect { Rect(x: 0, y: 0, width: canvas.width, height: canvas.height) }

    /// Background fill, then tiles in the given order (later = on top).
    ///
    /// cover: scale to fill the rect and crop the source centred (crop even-aligned); contain: fit inside
    /// the rect, the bars painted background (over anything below); stretch: scale to the rect.
    /// A rect partly outside the canvas is clipped; a frame with no pixels draws the placeholder.
    public mutating func compose(_ tiles: [Tile]) {
        ImageOps.fill(&canvas, rect: bounds, color: background)
        for tile in tiles where !tile.rect.isEmpty {
            guard let frame = tile.frame else {
                ImageOps.fill(&canvas, rect: tile.rect, color: placeholder)
                continue
            }
            let (crop, dest) = Self.geometry(sourceWidth: frame.width, sourceHeight: frame.height,
                                             rect: tile.rect, fit: tile.fit)
            guard !crop.isEmpty, !dest.isEmpty else {
                ImageOps.fill(&canvas, rect: tile.rect, color: placeholder)
                continue
            }
            if dest != tile.rect {
                ImageOps.fill(&canvas, rect: tile.rect, color: background)
            }
            // ImageOps cuts the part of dest beyond the canvas and takes the matching part of crop.
            ImageOps.scale(frame, crop: crop, into: &canvas, at: dest)
        }
    }

    /// Pure geometry used by `compose`: the source crop and the destination rect for a `sourceWidth`×`sourceHeight`
    /// frame drawn into `rect` with `fit`. Both empty when either size is not positive.
    ///
    /// - cover: dest = rect; the crop has the rect's aspect ratio, its long side floored to even
    ///   (at least 2 px, at most the source), centred with its origin floored to even.
    /// - contain: crop = the whole source; dest has the source's aspect ratio, its short side floored to even
    ///   (at least 2 px, at most the rect), centred in rect with the offset floored to even.
    /// - stretch: crop = the whole source, dest = rect.
    public static func geometry(sourceWidth sw: Int, sourceHeight sh: Int, rect: Rect,
                                fit: FitMode) -> (crop: Rect, dest: Rect) {
        let empty = Rect(x: 0, y: 0, width: 0, height: 0)
        guard sw > 0, sh > 0, !rect.isEmpty else { return (empty, empty) }
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
}
