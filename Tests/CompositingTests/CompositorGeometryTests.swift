import Media
import Testing
@testable import Compositing
import Layout

@Suite("VideoCompositor.geometry")
struct CompositorGeometryTests {
    private func r(_ x: Int, _ y: Int, _ w: Int, _ h: Int) -> Rect { Rect(x: x, y: y, width: w, height: h) }

    @Test func coverCropsAWideSourceCentredForASquareRect() {
        let g = VideoCompositor.geometry(sourceWidth: 1280, sourceHeight: 720, rect: r(100, 50, 360, 360), fit: .cover)
        #expect(g.crop == r(280, 0, 720, 720))
        #expect(g.dest == r(100, 50, 360, 360))
    }

    @Test func coverCropIsEvenAligned() {
        // 640×480 into 16:9: crop height 640·9/16 = 360, y = (480−360)/2 = 60.
        let a = VideoCompositor.geometry(sourceWidth: 640, sourceHeight: 480, rect: r(0, 0, 320, 180), fit: .cover)
        #expect(a.crop == r(0, 60, 640, 360))
        // 720×1280 into 640×360: height 720·360/640 = 405 → 404, y = 438.
        let b = VideoCompositor.geometry(sourceWidth: 720, sourceHeight: 1280, rect: r(0, 0, 640, 360), fit: .cover)
        #expect(b.crop == r(0, 438, 720, 404))
        // 1278×720 into 300×300: width 720 → x = (1278−720)/2 = 279 → 278.
        let c = VideoCompositor.geometry(sourceWidth: 1278, sourceHeight: 720, rect: r(0, 0, 300, 300), fit: .cover)
        #expect(c.crop == r(278, 0, 720, 720))
    }

    @Test func containLetterboxesAWideSource() {
        // Height 400·720/1280 = 225 → 224; offset (400−224)/2 = 88.
        let g = VideoCompositor.geometry(sourceWidth: 1280, sourceHeight: 720, rect: r(10, 20, 400, 400), fit: .contain)
        #expect(g.crop == r(0, 0, 1280, 720))
        #expect(g.dest == r(10, 108, 400, 224))
    }

    @Test func containPillarboxesATallSource() {
        // Width 360·720/1280 = 202; offset (640−202)/2 = 219 → 218.
        let g = VideoCompositor.geometry(sourceWidth: 720, sourceHeight: 1280, rect: r(0, 0, 640, 360), fit: .contain)
        #expect(g.crop == r(0, 0, 720, 1280))
        #expect(g.dest == r(218, 0, 202, 360))
    }

    @Test func stretchUsesTheWholeSourceAndTheWholeRect() {
        let g = VideoCompositor.geometry(sourceWidth: 1280, sourceHeight: 720, rect: r(2, 4, 100, 300), fit: .stretch)
        #expect(g.crop == r(0, 0, 1280, 720))
        #expect(g.dest == r(2, 4, 100, 300))
    }

    @Test func sameAspectNeedsNoCropOrBars() {
        for fit in FitMode.allCases {
            let g = VideoCompositor.geometry(sourceWidth: 1280, sourceHeight: 720, rect: r(0, 0, 640, 360), fit: fit)
            #expect(g.crop == r(0, 0, 1280, 720))
            #expect(g.dest == r(0, 0, 640, 360))
        }
    }

    @Test func emptyInputsGiveEmptyGeometry() {
        let g = VideoCompositor.geometry(sourceWidth: 0, sourceHeight: 720, rect: r(0, 0, 640, 360), fit: .cover)
        #expect(g.crop.isEmpty && g.dest.isEmpty)
        let h = VideoCompositor.geometry(sourceWidth: 640, sourceHeight: 360, rect: r(0, 0, 0, 360), fit: .contain)
        #expect(h.crop.isEmpty && h.dest.isEmpty)
    }
}
