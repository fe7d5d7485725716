import Media
import Testing
@testable import Compositing
import TestSupport
import Layout

/// Canvas checks shared by the compositor suites.
enum CompositorCheck {
    static func r(_ x: Int, _ y: Int, _ w: Int, _ h: Int) -> Rect { Rect(x: x, y: y, width: w, height: h) }

    static func inside(_ rect: Rect, _ x: Int, _ y: Int) -> Bool {
        x >= rect.x && x < rect.maxX && y >= rect.y && y < rect.maxY
    }

    /// Every canvas pixel equals `expected(x, y)`; reports the first mismatch only.
    static func expectCanvas(
        _ canvas: VideoFrame, _ expected: (Int, Int) -> YUVColor,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        for y in 0..<canvas.height {
            for x in 0..<canvas.width where canvas.pixel(x: x, y: y) != expected(x, y) {
                Issue.record(
                    "pixel (\(x), \(y)) is \(canvas.pixel(x: x, y: y)), expected \(expected(x, y))",
                    sourceLocation: sourceLocation)
                return
            }
        }
    }

    /// `below + (tile − below)·alpha`, rounded half up, per component: the compositor's blending rule.
    static func blend(_ below: YUVColor, _ tile: YUVColor, _ alpha: Double) -> YUVColor {
        func mix(_ b: UInt8, _ t: UInt8) -> UInt8 {
            UInt8(Int(b) + Int((Double(Int(t) - Int(b)) * alpha + 0.5).rounded(.down)))
        }
        return YUVColor(y: mix(below.y, tile.y), u: mix(below.u, tile.u), v: mix(below.v, tile.v))
    }

    static func frame(
        _ width: Int, _ height: Int, _ left: YUVColor, right: YUVColor? = nil, split: Int = 0
    ) -> VideoFrame {
        solidFrame(width, height, left, right: right, split: split)
    }

    /// The address of the canvas's luma storage, to show it was written in place.
    static func storage(_ frame: VideoFrame) -> UInt {
        frame.y.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
    }
}

@Suite("VideoCompositor alpha and borders")
struct CompositorAlphaTests {
    static let background = YUVColor(y: 16, u: 128, v: 128)
    static let placeholder = YUVColor(y: 60, u: 140, v: 110)
    static let low = YUVColor(y: 100, u: 90, v: 160)
    static let high = YUVColor(y: 200, u: 150, v: 60)
    static let edge = YUVColor(y: 235, u: 128, v: 128)
    static let green = YUVColor(r: 0, g: 255, b: 0)

    private func compositor() -> VideoCompositor {
        VideoCompositor(width: 128, height: 72, background: Self.background, placeholder: Self.placeholder)
    }

    private let full = CompositorCheck.r(0, 0, 128, 72)

    @Test func halfAlphaBlendsExactlyInLumaAndChroma() {
        var c = compositor()
        let rect = CompositorCheck.r(20, 10, 40, 30)
        c.compose([
            Tile(rect: full, fit: .stretch, frame: CompositorCheck.frame(16, 16, Self.low)),
            Tile(rect: rect, fit: .stretch, frame: CompositorCheck.frame(8, 8, Self.high), alpha: 0.5),
        ])
        // 100 + (200 − 100)·0.5 = 150; U 90 + 60·0.5 = 120; V 160 − 100·0.5 = 110.
        #expect(CompositorCheck.blend(Self.low, Self.high, 0.5) == YUVColor(y: 150, u: 120, v: 110))
        CompositorCheck.expectCanvas(c.canvas) { x, y in
            CompositorCheck.inside(rect, x, y) ? YUVColor(y: 150, u: 120, v: 110) : Self.low
        }
    }

    @Test func alphaZeroDrawsNothing() {
        var c = compositor()
        c.compose([
            Tile(rect: full, fit: .stretch, frame: CompositorCheck.frame(16, 16, Self.low)),
            Tile(
                rect: CompositorCheck.r(20, 10, 40, 30), fit: .stretch, frame: CompositorCheck.frame(8, 8, Self.high),
                alpha: 0, border: TileBorder(color: Self.edge, width: 4)),
            Tile(rect: CompositorCheck.r(0, 0, 64, 64), fit: .stretch, frame: nil, alpha: .nan, speaking: true),
        ])
        CompositorCheck.expectCanvas(c.canvas) { _, _ in Self.low }
        #expect(c.scratchAllocations == 0)
    }

    @Test func borderCoversTheEdgeAndNotOnePixelFurther() {
        var c = compositor()
        let rect = CompositorCheck.r(20, 10, 40, 30)
        // Width 5 is floored to 4 (I420 chroma covers 2×2 pixels).
        c.compose([
            Tile(
                rect: rect, fit: .stretch, frame: CompositorCheck.frame(8, 8, Self.high),
                border: TileBorder(color: Self.edge, width: 5))
        ])
        let innerRect = CompositorCheck.r(24, 14, 32, 22)
        CompositorCheck.expectCanvas(c.canvas) { x, y in
            CompositorCheck.inside(innerRect, x, y)
                ? Self.high
                : CompositorCheck.inside(rect, x, y) ? Self.edge : Self.background
        }
    }

    @Test func placeholderWithoutAndWithTheSpeakingIndicator() {
        let rect = CompositorCheck.r(64, 30, 40, 30)
        var c = compositor()
        c.compose([Tile(rect: rect, fit: .cover, frame: nil)])
        CompositorCheck.expectCanvas(c.canvas) { x, y in
            CompositorCheck.inside(rect, x, y) ? Self.placeholder : Self.background
        }

        c.compose([Tile(rect: rect, fit: .cover, frame: nil, speaking: true)])
        #expect(c.speakingBorder == TileBorder(color: YUVColor(hex: "#22C55E")!, width: 6))
        let speaking = c.speakingBorder.color
        let innerRect = CompositorCheck.r(70, 36, 28, 18)
        CompositorCheck.expectCanvas(c.canvas) { x, y in
            CompositorCheck.inside(innerRect, x, y)
                ? Self.placeholder
                : CompositorCheck.inside(rect, x, y) ? speaking : Self.background
        }
    }

    @Test func speakingIndicatorIsOnlyForPlaceholders() {
        var c = compositor()
        let rect = CompositorCheck.r(64, 30, 40, 30)
        c.compose([Tile(rect: rect, fit: .stretch, frame: CompositorCheck.frame(8, 8, Self.high), speaking: true)])
        CompositorCheck.expectCanvas(c.canvas) { x, y in
            CompositorCheck.inside(rect, x, y) ? Self.high : Self.background
        }
    }

    @Test func customSpeakingBorderWidthIsFlooredToEven() {
        var c = compositor()
        c.speakingBorder = TileBorder(color: Self.edge, width: 3)
        let rect = CompositorCheck.r(0, 0, 20, 20)
        c.compose([Tile(rect: rect, fit: .cover, frame: nil, speaking: true)])
        CompositorCheck.expectCanvas(c.canvas) { x, y in
            CompositorCheck.inside(CompositorCheck.r(2, 2, 16, 16), x, y)
                ? Self.placeholder
                : CompositorCheck.inside(rect, x, y) ? Self.edge : Self.background
        }
    }

    @Test func overlapsFollowTheTileOrderWithAnAlphaTileInTheMiddle() {
        var c = compositor()
        let a = CompositorCheck.r(0, 0, 64, 40), b = CompositorCheck.r(32, 20, 64, 40),
            top = CompositorCheck.r(48, 30, 32, 20)
        c.compose([
            Tile(rect: a, fit: .stretch, frame: CompositorCheck.frame(8, 8, Self.low)),
            Tile(rect: b, fit: .stretch, frame: CompositorCheck.frame(8, 8, Self.high), alpha: 0.25),
            Tile(rect: top, fit: .stretch, frame: CompositorCheck.frame(8, 8, Self.edge)),
        ])
        CompositorCheck.expectCanvas(c.canvas) { x, y in
            if CompositorCheck.inside(top, x, y) { return Self.edge }
            let below = CompositorCheck.inside(a, x, y) ? Self.low : Self.background
            return CompositorCheck.inside(b, x, y) ? CompositorCheck.blend(below, Self.high, 0.25) : below
        }
        #expect(c.skippedTiles == 0)
    }

    @Test func tileOverTheCanvasEdgeIsClippedWithItsBorderAndAlpha() {
        var c = compositor()
        // 40×40 frame drawn 1:1 at x = −20: only its right (green) half shows, its left border is off canvas.
        let f = CompositorCheck.frame(40, 40, Self.high, right: Self.low, split: 20)
        c.compose([
            Tile(
                rect: CompositorCheck.r(-20, 0, 40, 40), fit: .stretch, frame: f, alpha: 0.5,
                border: TileBorder(color: Self.edge, width: 4)),
            Tile(
                rect: CompositorCheck.r(108, 52, 40, 40), fit: .stretch, frame: nil, alpha: 0.5,
                border: TileBorder(color: Self.edge, width: 4)),
        ])
        let picture = CompositorCheck.blend(Self.background, Self.low, 0.5)
        let border = CompositorCheck.blend(Self.background, Self.edge, 0.5)
        let hidden = CompositorCheck.blend(Self.background, Self.placeholder, 0.5)
        CompositorCheck.expectCanvas(c.canvas) { x, y in
            if x < 20 && y < 40 { return (y < 4 || y >= 36 || x >= 16) ? border : picture }
            // Bottom-right tile: only its top and left border edges are on the canvas.
            if x >= 108 && y >= 52 { return (x < 112 || y < 56) ? border : hidden }
            return Self.background
        }
    }

    @Test func alphaTilesReuseOneScratchFrameAcrossFrames() {
        var c = compositor()
        c.placeholderImage = AlphaPicture(opaque: CompositorCheck.frame(8, 8, Self.edge))
        c.backgroundImage = AlphaPicture(opaque: CompositorCheck.frame(16, 9, Self.low))
        c.watermark = Watermark(
            image: AlphaPicture(opaque: CompositorCheck.frame(4, 4, Self.high)),
            rect: CompositorCheck.r(100, 4, 16, 16), opacity: 0.5)
        let moving = CompositorCheck.frame(32, 18, Self.high)
        c.compose([])
        let canvasStorage = CompositorCheck.storage(c.canvas)
        #expect(c.scratchAllocations == 0)
        var scalingsAfterFirst = 0
        for i in 0..<100 {
            c.watermark?.opacity = Double(i % 10) / 10  // a fade: opacity changes, the scaled image does not
            c.compose([
                Tile(rect: CompositorCheck.r(0, 0, 64, 36), fit: .cover, frame: moving, alpha: 0.7),
                Tile(rect: CompositorCheck.r(40, 20, 64, 36), fit: .contain, frame: nil, alpha: 0.3, speaking: true),
                Tile(
                    rect: CompositorCheck.r(80, 40, 48, 32), fit: .stretch, frame: moving, alpha: 0.5,
                    border: TileBorder(color: Self.edge, width: 2)),
            ])
            if i == 0 { scalingsAfterFirst = c.imageScalings }
            #expect(c.scratchAllocations == 1)
        }
        // Background, watermark and one placeholder size: each scaled once.
        #expect(scalingsAfterFirst == 3)
        #expect(c.imageScalings == 3)
        #expect(CompositorCheck.storage(c.canvas) == canvasStorage)
    }
}
