import Media
import Testing
@testable import Compositing
import TestSupport

@Suite("VideoCompositor.compose")
struct VideoCompositorTests {
    static let background = YUVColor(r: 20, g: 20, b: 20)
    static let placeholder = YUVColor(r: 90, g: 90, b: 90)
    static let red = YUVColor(r: 255, g: 0, b: 0)
    static let green = YUVColor(r: 0, g: 255, b: 0)
    static let blue = YUVColor(r: 0, g: 0, b: 255)

    private func r(_ x: Int, _ y: Int, _ w: Int, _ h: Int) -> Rect { Rect(x: x, y: y, width: w, height: h) }

    private func compositor() -> VideoCompositor {
        VideoCompositor(width: 128, height: 72, background: Self.background, placeholder: Self.placeholder)
    }

    private func frame(
        _ width: Int, _ height: Int, left: YUVColor, right: YUVColor? = nil, split: Int? = nil
    ) -> VideoFrame {
        solidFrame(width, height, left, right: split == nil ? nil : right, split: split ?? 0)
    }

    @Test func solidFrameLandsExactlyInItsRect() {
        var c = compositor()
        let rect = r(20, 10, 40, 30)
        c.compose([Tile(rect: rect, fit: .stretch, frame: frame(32, 18, left: Self.red))])
        CompositorCheck.expectCanvas(c.canvas) { x, y in CompositorCheck.inside(rect, x, y) ? Self.red : Self.background
        }
    }

    @Test func coverShowsTheCentreOfAWideFrame() {
        // 64×36 frame: green sides, red centre 14..<50 — exactly the 36×36 crop cover takes for a square rect.
        var f = frame(64, 36, left: Self.green, right: Self.red, split: 14)
        for y in 0..<36 { for x in 50..<64 { f.y[y * 64 + x] = Self.green.y } }
        for y in 0..<18 {
            for x in 25..<32 {
                f.u[y * 32 + x] = Self.green.u
                f.v[y * 32 + x] = Self.green.v
            }
        }
        var c = compositor()
        let rect = r(40, 20, 36, 36)
        c.compose([Tile(rect: rect, fit: .cover, frame: f)])
        CompositorCheck.expectCanvas(c.canvas) { x, y in CompositorCheck.inside(rect, x, y) ? Self.red : Self.background
        }
    }

    @Test func containPaintsBackgroundBarsOverLowerTiles() {
        var c = compositor()
        let under = r(0, 0, 128, 72)
        let rect = r(10, 10, 40, 40)
        // 64×36 into 40×40: height 22 → dest (10, 18, 40, 22).
        let dest = r(10, 18, 40, 22)
        c.compose([
            Tile(rect: under, fit: .stretch, frame: frame(16, 16, left: Self.green)),
            Tile(rect: rect, fit: .contain, frame: frame(64, 36, left: Self.blue)),
        ])
        CompositorCheck.expectCanvas(c.canvas) { x, y in
            CompositorCheck.inside(dest, x, y)
                ? Self.blue : CompositorCheck.inside(rect, x, y) ? Self.background : Self.green
        }
    }

    @Test func laterTilesAreOnTop() {
        var c = compositor()
        let low = r(0, 0, 64, 40), high = r(32, 20, 64, 40)
        c.compose([
            Tile(rect: low, fit: .stretch, frame: frame(8, 8, left: Self.red)),
            Tile(rect: high, fit: .stretch, frame: frame(8, 8, left: Self.blue)),
        ])
        CompositorCheck.expectCanvas(c.canvas) { x, y in
            CompositorCheck.inside(high, x, y)
                ? Self.blue : CompositorCheck.inside(low, x, y) ? Self.red : Self.background
        }
    }

    @Test func missingFrameShowsThePlaceholder() {
        var c = compositor()
        let rect = r(64, 36, 32, 18)
        c.compose([Tile(rect: rect, fit: .cover, frame: nil)])
        CompositorCheck.expectCanvas(c.canvas) { x, y in
            CompositorCheck.inside(rect, x, y) ? Self.placeholder : Self.background
        }
    }

    @Test func tilePartlyOutsideIsCutNotSqueezed() {
        // 40×40 frame, red left half, green right half, drawn 1:1 with its left half off the canvas.
        var c = compositor()
        c.compose([
            Tile(
                rect: r(-20, 0, 40, 40), fit: .stretch,
                frame: frame(40, 40, left: Self.red, right: Self.green, split: 20)),
            Tile(rect: r(112, 60, 32, 32), fit: .stretch, frame: frame(8, 8, left: Self.blue)),
        ])
        CompositorCheck.expectCanvas(c.canvas) { x, y in
            CompositorCheck.inside(r(0, 0, 20, 40), x, y)
                ? Self.green : CompositorCheck.inside(r(112, 60, 16, 12), x, y) ? Self.blue : Self.background
        }
    }

    @Test func composeRepaintsTheBackgroundEachTick() {
        var c = compositor()
        c.compose([Tile(rect: r(0, 0, 128, 72), fit: .stretch, frame: frame(8, 8, left: Self.red))])
        c.background = Self.blue
        c.compose([])
        CompositorCheck.expectCanvas(c.canvas) { _, _ in Self.blue }
    }

    @Test func aSteadyGridBuildsItsScalingTablesOnceAndDrawsEachTileInPlace() {
        var c = VideoCompositor(width: 1280, height: 720, background: Self.background, placeholder: Self.placeholder)
        let colours = [Self.red, Self.green, Self.blue]
        // The 3x3 grid's tile: 640x360 pictures into 426x240 cells, the table kernel's case.
        let tiles = (0..<9).map { i in
            Tile(
                rect: r(426 * (i % 3), 240 * (i / 3), 426, 240), fit: .stretch,
                frame: frame(640, 360, left: colours[i % 3]))
        }
        for _ in 0..<5 { c.compose(tiles) }
        #expect(c.scalerTablesBuilt == 2)  // 640 -> 426 luma, 320 -> 213 chroma: once, not per tick or per tile
        for (i, tile) in tiles.enumerated() {
            let centre = c.canvas.pixel(x: tile.rect.x + 213, y: tile.rect.y + 120)
            #expect(centre == colours[i % 3], "tile \(i): \(centre)")
        }
    }
}
