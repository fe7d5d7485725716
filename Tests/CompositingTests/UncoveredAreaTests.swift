import Media
import TestSupport
import Testing
@testable import Compositing

@Suite("UncoveredArea: where the background colour is painted")
struct UncoveredAreaTests {
    private func r(_ x: Int, _ y: Int, _ w: Int, _ h: Int) -> Rect { Rect(x: x, y: y, width: w, height: h) }

    @Test func aTwoByTwoGridOfTheCanvasLeavesNoGap() {
        let grid = [r(0, 0, 640, 360), r(640, 0, 640, 360), r(0, 360, 640, 360), r(640, 360, 640, 360)]
        #expect(UncoveredArea.gaps(in: r(0, 0, 1280, 720), minus: grid) == [])
    }

    @Test func aCentredTileLeavesABandAboveOneEachSideAndABandBelow() {
        #expect(
            UncoveredArea.gaps(in: r(0, 0, 100, 60), minus: [r(20, 10, 40, 30)])
                == [r(0, 0, 100, 10), r(0, 10, 20, 30), r(60, 10, 40, 30), r(0, 40, 100, 20)])
    }

    @Test func overlappingCoversCountAsTheirUnion() {
        #expect(
            UncoveredArea.gaps(in: r(0, 0, 100, 60), minus: [r(0, 0, 60, 60), r(40, 20, 60, 20)])
                == [r(60, 0, 40, 20), r(60, 40, 40, 20)])
    }

    @Test func aGapSplitOnlyByAnotherTilesEdgeStaysOneRect() {
        // The edge at y=30 of the right-hand tiles cuts a band, but the gap between them and the left tile is
        // the same column above and below it.
        #expect(
            UncoveredArea.gaps(in: r(0, 0, 100, 60), minus: [r(0, 0, 20, 60), r(80, 0, 20, 30), r(80, 30, 20, 30)])
                == [r(20, 0, 60, 60)])
    }

    @Test func coversHangingOverTheEdgeAreCutToTheBounds() {
        #expect(
            UncoveredArea.gaps(in: r(0, 0, 100, 60), minus: [r(-10, -10, 50, 50), r(200, 0, 10, 10)])
                == [r(40, 0, 60, 40), r(0, 40, 100, 20)])
    }

    @Test func nothingToCoverLeavesTheWholeCanvas() {
        #expect(UncoveredArea.gaps(in: r(0, 0, 100, 60), minus: [r(0, 0, 0, 30)]) == [r(0, 0, 100, 60)])
    }

    /// Every pixel is either under a cover or in exactly one gap, never both, for random covers.
    @Test func gapsAndCoversPartitionTheCanvasExactly() {
        var rng = SplitMix64(seed: 7)
        let width = 64, height = 48
        for _ in 0..<300 {
            let covers = (0..<Int(rng.next() % 6)).map { _ in
                r(Int(rng.next() % 80) - 8, Int(rng.next() % 60) - 6, Int(rng.next() % 40), Int(rng.next() % 30))
            }
            let gaps = UncoveredArea.gaps(in: r(0, 0, width, height), minus: covers)
            for y in 0..<height {
                for x in 0..<width {
                    let covered = covers.contains {
                        !$0.isEmpty && x >= $0.x && x < $0.maxX && y >= $0.y && y < $0.maxY
                    }
                    let inGaps = gaps.filter { x >= $0.x && x < $0.maxX && y >= $0.y && y < $0.maxY }.count
                    #expect(inGaps == (covered ? 0 : 1), "pixel \(x),\(y) covers \(covers) gaps \(gaps)")
                    if inGaps != (covered ? 0 : 1) { return }
                }
            }
        }
    }
}

@Suite("VideoCompositor paints the background only where it shows")
struct CompositorBackgroundTests {
    static let background = YUVColor(r: 20, g: 20, b: 20)
    static let red = YUVColor(r: 255, g: 0, b: 0)
    static let green = YUVColor(r: 0, g: 255, b: 0)
    private let r = CompositorCheck.r

    private func compositor() -> VideoCompositor {
        VideoCompositor(width: 128, height: 72, background: Self.background, placeholder: YUVColor(r: 90, g: 90, b: 90))
    }

    private func tile(_ rect: Rect, _ color: YUVColor, alpha: Double = 1) -> Tile {
        Tile(rect: rect, fit: .stretch, frame: CompositorCheck.frame(16, 16, color), alpha: alpha)
    }

    @Test func aGridThatCoversTheCanvasPaintsNoBackground() {
        var c = compositor()
        let left = r(0, 0, 64, 72), right = r(64, 0, 64, 72)
        c.compose([tile(left, Self.red), tile(right, Self.green)])
        #expect(c.backgroundPixels == 0)
        CompositorCheck.expectCanvas(c.canvas) { x, _ in x < 64 ? Self.red : Self.green }
    }

    @Test func theBackgroundComesBackWhereATileMovesAway() {
        var c = compositor()
        c.compose([tile(r(0, 0, 64, 72), Self.red), tile(r(64, 0, 64, 72), Self.green)])
        c.compose([tile(r(64, 0, 64, 72), Self.red)])
        #expect(c.backgroundPixels == 64 * 72)
        CompositorCheck.expectCanvas(c.canvas) { x, _ in x < 64 ? Self.background : Self.red }
    }

    @Test func aTranslucentTileIsBlendedOverFreshBackground() {
        var c = compositor()
        c.compose([tile(r(0, 0, 128, 72), Self.red)])
        c.compose([tile(r(0, 0, 128, 72), Self.green, alpha: 0.5)])
        #expect(c.backgroundPixels == 128 * 72)
        CompositorCheck.expectCanvas(c.canvas) { _, _ in CompositorCheck.blend(Self.background, Self.green, 0.5) }
    }

    @Test func aSteadyLayoutWorksOutTheUncoveredAreaOnce() {
        var c = compositor()
        for color in [Self.red, Self.green, Self.red] {
            c.compose([tile(r(0, 0, 64, 36), color), tile(r(64, 36, 64, 36), color)])
        }
        #expect(c.uncoveredAreaComputations == 1)
        #expect(c.backgroundPixels == 2 * 64 * 36)
        c.compose([tile(r(0, 0, 64, 36), Self.red)])
        #expect(c.uncoveredAreaComputations == 2)
        #expect(c.backgroundPixels == 128 * 72 - 64 * 36)
    }
}

extension CompositorBackgroundTests {
    /// 2 of a 1000-pixel tile's columns show at the canvas's left edge; they map to less than one source pixel
    /// pair, so the scaler paints nothing there. The background under the tile is not painted either, so the
    /// tile paints those columns as bars rather than leave the red of the last frame.
    @Test func aSliverMappingToNoSourcePixelsIsPaintedAsBarsNotLeftStale() {
        var c = compositor()
        c.compose([tile(r(0, 0, 128, 72), Self.red)])
        let sliver = r(-998, 0, 1000, 72)
        c.compose([tile(sliver, Self.green), tile(r(2, 0, 126, 72), Self.red)])
        #expect(c.backgroundPixels == 0)
        CompositorCheck.expectCanvas(c.canvas) { x, _ in x < 2 ? Self.background : Self.red }
    }

    /// libyuv refuses a source wider than 32768 and the table kernel does not take it either: the tile is painted as
    /// bars instead of leaving the last frame's pixels.
    @Test func aPictureTheScalersRefuseIsPaintedAsBarsNotLeftStale() {
        var c = compositor()
        c.compose([tile(r(0, 0, 128, 72), Self.red)])
        c.compose([
            Tile(rect: r(0, 0, 128, 72), fit: .stretch, frame: VideoFrame(width: 40_000, height: 2, color: Self.green))
        ])
        #expect(c.backgroundPixels == 0)
        CompositorCheck.expectCanvas(c.canvas) { _, _ in Self.background }
    }
}
