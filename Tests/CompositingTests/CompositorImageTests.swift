import Media
import Testing
@testable import Compositing
import Layout

@Suite("VideoCompositor images and occlusion")
struct CompositorImageTests {
    static let background = YUVColor(y: 16, u: 128, v: 128)
    static let placeholder = YUVColor(y: 100, u: 128, v: 128)
    static let ink = YUVColor(y: 200, u: 60, v: 180)
    static let red = YUVColor(r: 255, g: 0, b: 0)
    static let blue = YUVColor(r: 0, g: 0, b: 255)

    private func compositor() -> VideoCompositor {
        VideoCompositor(width: 128, height: 72, background: Self.background, placeholder: Self.placeholder)
    }

    /// A `width`×`height` picture of one colour whose alpha is `alpha(x)` per column.
    private func image(_ width: Int, _ height: Int, _ color: YUVColor, alpha: (Int) -> UInt8) -> AlphaPicture? {
        let plane = (0..<height).flatMap { _ in (0..<width).map(alpha) }
        return AlphaPicture(picture: VideoFrame(width: width, height: height, color: color), alpha: plane)
    }

    @Test func placeholderImageIsContainedAndCentredOnThePlaceholderColour() throws {
        var c = compositor()
        // 32×16 image, columns 0..<12 opaque, 12..<20 alpha 128, 20..<32 transparent; drawn 1:1.
        c.placeholderImage = try #require(image(32, 16, Self.ink) { x in x < 12 ? 255 : x < 20 ? 128 : 0 })
        let rect = CompositorCheck.r(16, 8, 32, 32)
        c.compose([Tile(rect: rect, fit: .cover, frame: nil)])
        // contain: 32×16 in 32×32 → dest (16, 16, 32, 16), centred vertically.
        let half = YUVColor(y: 150, u: 94, v: 154)  // 128/255 of the way from placeholder to ink, rounded
        CompositorCheck.expectCanvas(c.canvas) { x, y in
            guard CompositorCheck.inside(rect, x, y) else { return Self.background }
            guard y >= 16 && y < 32 else { return Self.placeholder }
            return x < 28 ? Self.ink : x < 36 ? half : Self.placeholder
        }
        #expect(c.imageScalings == 1)
    }

    @Test func placeholderImageIsScaledOncePerTileSize() throws {
        var c = compositor()
        c.placeholderImage = AlphaPicture(opaque: VideoFrame(width: 8, height: 8, color: Self.ink))
        let tiles = [
            Tile(rect: CompositorCheck.r(0, 0, 40, 40), fit: .cover, frame: nil),
            Tile(rect: CompositorCheck.r(60, 0, 20, 20), fit: .cover, frame: nil),
        ]
        c.compose(tiles)
        c.compose(tiles)
        #expect(c.imageScalings == 2)
        // Square image in square rects: the whole rect is ink.
        CompositorCheck.expectCanvas(c.canvas) { x, y in
            CompositorCheck.inside(tiles[0].rect, x, y) || CompositorCheck.inside(tiles[1].rect, x, y)
                ? Self.ink : Self.background
        }
        // A new image is scaled again; re-assigning the same one is not.
        let same = c.placeholderImage
        c.placeholderImage = same
        c.compose(tiles)
        #expect(c.imageScalings == 2)
        c.placeholderImage = AlphaPicture(opaque: VideoFrame(width: 8, height: 8, color: Self.red))
        c.compose(tiles)
        #expect(c.imageScalings == 4)
        #expect(c.canvas.pixel(x: 70, y: 10) == Self.red)
    }

    @Test func backgroundImageIsUnderTheTilesAndBlendedByItsAlpha() throws {
        var c = compositor()
        // Same aspect as the canvas (cover takes all of it); top half alpha 255, bottom half alpha 128.
        let plane = (0..<36).flatMap { y in [UInt8](repeating: y < 18 ? 255 : 128, count: 64) }
        // Bound first: assigned straight to the optional property, #require would unwrap to an optional.
        let image = try #require(
            AlphaPicture(picture: VideoFrame(width: 64, height: 36, color: Self.ink), alpha: plane))
        c.backgroundImage = image
        let rect = CompositorCheck.r(40, 20, 40, 30)
        c.compose([Tile(rect: rect, fit: .stretch, frame: VideoFrame(width: 8, height: 8, color: Self.red))])
        let faded = CompositorCheck.blend(Self.background, Self.ink, 128.0 / 255)
        CompositorCheck.expectCanvas(c.canvas) { x, y in
            if CompositorCheck.inside(rect, x, y) { return Self.red }
            // The scaled alpha ramps between the halves around y = 36; check away from the seam.
            if y < 34 { return Self.ink }
            if y >= 38 { return faded }
            return c.canvas.pixel(x: x, y: y)
        }
        c.backgroundImage = nil
        c.compose([])
        CompositorCheck.expectCanvas(c.canvas) { _, _ in Self.background }
    }

    @Test func backgroundImageCoversTheCanvasCroppingCentred() {
        var c = compositor()
        // 36×36: red rows 0..<8 and 28..<36, blue 8..<28. Cover on 128×72 (16:9) keeps rows 8..<28 (2 px → 7.2 px).
        var f = VideoFrame(width: 36, height: 36, color: Self.red)
        for y in 8..<28 { for x in 0..<36 { f.y[y * 36 + x] = Self.blue.y } }
        for y in 4..<14 {
            for x in 0..<18 {
                f.u[y * 18 + x] = Self.blue.u
                f.v[y * 18 + x] = Self.blue.v
            }
        }
        c.backgroundImage = AlphaPicture(opaque: f)
        c.compose([])
        // cover crop: height 36·72/128 = 20.25 → 20, y = 8: exactly the blue band.
        CompositorCheck.expectCanvas(c.canvas) { _, _ in Self.blue }
    }

    @Test func watermarkIsOverTheTilesAtItsRectWithItsOpacity() throws {
        var c = compositor()
        let rect = CompositorCheck.r(100, 40, 16, 16)
        c.watermark = Watermark(
            image: AlphaPicture(opaque: VideoFrame(width: 8, height: 8, color: Self.ink)),
            rect: rect, opacity: 0.5)
        c.compose([
            Tile(
                rect: CompositorCheck.r(0, 0, 128, 72), fit: .stretch,
                frame: VideoFrame(width: 8, height: 8, color: Self.placeholder))
        ])
        // 100 + (200 − 100)/2 = 150; U 128 − 34 = 94; V 128 + 26 = 154.
        CompositorCheck.expectCanvas(c.canvas) { x, y in
            CompositorCheck.inside(rect, x, y) ? YUVColor(y: 150, u: 94, v: 154) : Self.placeholder
        }
        c.watermark?.opacity = 1
        c.compose([
            Tile(
                rect: CompositorCheck.r(0, 0, 128, 72), fit: .stretch,
                frame: VideoFrame(width: 8, height: 8, color: Self.placeholder))
        ])
        CompositorCheck.expectCanvas(c.canvas) { x, y in
            CompositorCheck.inside(rect, x, y) ? Self.ink : Self.placeholder
        }
        #expect(c.imageScalings == 1)
        c.watermark?.rect = CompositorCheck.r(0, 0, 32, 32)
        c.compose([])
        #expect(c.imageScalings == 2)
        c.watermark = nil
        c.compose([])
        CompositorCheck.expectCanvas(c.canvas) { _, _ in Self.background }
    }

    @Test func watermarkHangingOverTheCornerIsCut() {
        var c = compositor()
        c.watermark = Watermark(
            image: AlphaPicture(opaque: VideoFrame(width: 8, height: 8, color: Self.ink)),
            rect: CompositorCheck.r(120, 64, 16, 16))
        c.compose([])
        CompositorCheck.expectCanvas(c.canvas) { x, y in x >= 120 && y >= 64 ? Self.ink : Self.background }
    }

    @Test func tileCoveredByOneOpaqueTileIsSkippedAndNeverShows() {
        var c = compositor()
        let lowRect = CompositorCheck.r(20, 10, 40, 30)
        // The cover is a contain tile: its bars (background) paint over the lower tile too.
        let topRect = CompositorCheck.r(20, 10, 40, 30)
        let wide = VideoFrame(width: 64, height: 16, color: Self.blue)
        c.compose([
            Tile(
                rect: lowRect, fit: .stretch, frame: VideoFrame(width: 8, height: 8, color: Self.red),
                border: TileBorder(color: Self.ink, width: 2)),
            Tile(rect: topRect, fit: .contain, frame: wide),
        ])
        #expect(c.skippedTiles == 1)
        // 64×16 in 40×30: height 10, y offset 10 → dest (20, 20, 40, 10).
        let dest = CompositorCheck.r(20, 20, 40, 10)
        CompositorCheck.expectCanvas(c.canvas) { x, y in
            CompositorCheck.inside(dest, x, y) ? Self.blue : Self.background
        }
    }

    @Test func partlyCoveredOrTranslucentlyCoveredTilesAreDrawn() {
        var c = compositor()
        let lowRect = CompositorCheck.r(20, 10, 40, 30)
        c.compose([
            Tile(rect: lowRect, fit: .stretch, frame: VideoFrame(width: 8, height: 8, color: Self.red)),
            Tile(
                rect: CompositorCheck.r(0, 0, 128, 72), fit: .stretch,
                frame: VideoFrame(width: 8, height: 8, color: Self.blue), alpha: 0.5),
        ])
        #expect(c.skippedTiles == 0)
        #expect(c.canvas.pixel(x: 30, y: 20) == CompositorCheck.blend(Self.red, Self.blue, 0.5))
        // Covered by two tiles together but by neither alone: drawn.
        c.compose([
            Tile(rect: lowRect, fit: .stretch, frame: VideoFrame(width: 8, height: 8, color: Self.red)),
            Tile(rect: CompositorCheck.r(0, 0, 40, 72), fit: .stretch, frame: nil),
            Tile(rect: CompositorCheck.r(40, 0, 88, 72), fit: .stretch, frame: nil),
        ])
        #expect(c.skippedTiles == 0)
        // Covered only where it hangs on the canvas: the off-canvas part does not matter.
        c.compose([
            Tile(
                rect: CompositorCheck.r(-40, -40, 80, 80), fit: .stretch,
                frame: VideoFrame(width: 8, height: 8, color: Self.red)),
            Tile(rect: CompositorCheck.r(0, 0, 40, 40), fit: .stretch, frame: nil),
        ])
        #expect(c.skippedTiles == 1)
        CompositorCheck.expectCanvas(c.canvas) { x, y in x < 40 && y < 40 ? Self.placeholder : Self.background }
    }
}

@Suite("VideoCompositor hostile values")
struct CompositorHostileTests {
    @Test func absurdRectsAndOpacitiesDrawNothingAndDoNotTrap() {
        let bg = YUVColor(y: 16, u: 128, v: 128)
        var c = VideoCompositor(width: 64, height: 32, background: bg, placeholder: YUVColor(y: 90, u: 128, v: 128))
        let image = AlphaPicture(opaque: VideoFrame(width: 4, height: 4, color: YUVColor(y: 200, u: 128, v: 128)))
        c.watermark = Watermark(
            image: image, rect: Rect(x: Int.max - 8, y: 0, width: Int.max, height: Int.max), opacity: 1)
        c.placeholderImage = image
        c.compose([
            Tile(
                rect: Rect(x: Int.min, y: Int.min, width: Int.max, height: Int.max), fit: .contain, frame: nil,
                border: TileBorder(color: bg, width: Int.max), speaking: true),
            Tile(
                rect: Rect(x: 0, y: 0, width: 1 << 40, height: 8), fit: .cover, frame: VideoFrame(width: 4, height: 4)),
        ])
        #expect(
            VideoCompositor.geometry(
                sourceWidth: 4, sourceHeight: 4, rect: Rect(x: 0, y: 0, width: Int.max, height: 8), fit: .cover
            ).dest.isEmpty)
        c.watermark = Watermark(image: image, rect: Rect(x: 0, y: 0, width: 8, height: 8), opacity: .nan)
        c.compose([])
        CompositorCheck.expectCanvas(c.canvas) { _, _ in bg }
    }
}
