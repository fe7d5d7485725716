import Media
import Testing
@testable import Compositing
import Layout

/// Labels and cards as the compositor draws them: a label at its position inside the tile's margin over the picture,
/// a card centred on the placeholder instead of the label, nothing when it does not fit.
@Suite("VideoCompositor labels and cards")
struct CompositorLabelTests {
    static let background = YUVColor(y: 16, u: 128, v: 128)
    static let placeholder = YUVColor(y: 100, u: 128, v: 128)
    static let ink = YUVColor(y: 200, u: 60, v: 180)
    static let blue = YUVColor(r: 0, g: 0, b: 255)

    private func label(_ width: Int, _ height: Int, _ position: LabelPosition) -> TileLabel {
        TileLabel(
            image: AlphaPicture(opaque: VideoFrame(width: width, height: height, color: Self.ink)), position: position)
    }

    @Test func aLabelSitsInsideTheTilesMarginAtItsPosition() {
        var c = VideoCompositor(width: 128, height: 72, background: Self.background, placeholder: Self.placeholder)
        let rect = CompositorCheck.r(0, 0, 128, 72)
        // Margin: a 40th of the shorter side (1.8), at least 4.
        let cases: [(LabelPosition, Rect)] = [
            (.bottomLeft, CompositorCheck.r(4, 56, 20, 12)), (.topLeft, CompositorCheck.r(4, 4, 20, 12)),
            (.topRight, CompositorCheck.r(104, 4, 20, 12)), (.bottomRight, CompositorCheck.r(104, 56, 20, 12)),
            (.center, CompositorCheck.r(54, 30, 20, 12)), (.top, CompositorCheck.r(54, 4, 20, 12)),
            (.bottom, CompositorCheck.r(54, 56, 20, 12)),
        ]
        for (position, at) in cases {
            c.compose([
                Tile(
                    rect: rect, fit: .stretch, frame: VideoFrame(width: 8, height: 8, color: Self.blue),
                    label: label(20, 12, position))
            ])
            CompositorCheck.expectCanvas(c.canvas) { x, y in CompositorCheck.inside(at, x, y) ? Self.ink : Self.blue }
        }
    }

    @Test func aTileWithoutAPictureShowsItsCardCentredAndNotItsLabel() {
        var c = VideoCompositor(width: 128, height: 72, background: Self.background, placeholder: Self.placeholder)
        let rect = CompositorCheck.r(0, 0, 64, 72)
        let card = label(20, 10, .center)
        c.compose([Tile(rect: rect, fit: .cover, frame: nil, label: label(20, 12, .bottomLeft), card: card)])
        let at = CompositorCheck.r(22, 32, 20, 10)
        CompositorCheck.expectCanvas(c.canvas) { x, y in
            guard CompositorCheck.inside(rect, x, y) else { return Self.background }
            return CompositorCheck.inside(at, x, y) ? Self.ink : Self.placeholder
        }
        // Without a card the label is drawn on the placeholder, as on a picture.
        c.compose([Tile(rect: rect, fit: .cover, frame: nil, label: label(20, 12, .bottomLeft))])
        #expect(c.canvas.pixel(x: 4, y: 56) == Self.ink)
    }

    @Test func aLabelThatDoesNotFitItsTileWithItsMarginIsLeftOut() {
        var c = VideoCompositor(width: 128, height: 72, background: Self.background, placeholder: Self.placeholder)
        let rect = CompositorCheck.r(0, 0, 32, 20)
        c.compose([
            Tile(
                rect: rect, fit: .stretch, frame: VideoFrame(width: 8, height: 8, color: Self.blue),
                label: label(26, 12, .bottomLeft))
        ])
        CompositorCheck.expectCanvas(c.canvas) { x, y in
            CompositorCheck.inside(rect, x, y) ? Self.blue : Self.background
        }
    }
}
