import Testing
import Media
@testable import Codecs

@Suite("ImageOps")
struct ImageOpsTests {
    /// Every luma pixel outside `rect` and every chroma sample outside its chroma rect still equals `color`.
    func untouchedOutside(_ f: VideoFrame, rect: Rect, color: YUVColor) -> Bool {
        for py in 0..<f.height {
            for px in 0..<f.width where !(px >= rect.x && px < rect.maxX && py >= rect.y && py < rect.maxY) {
                if f.y[py * f.strideY + px] != color.y { return false }
            }
        }
        let c = Rect(x: rect.x / 2, y: rect.y / 2, width: rect.width / 2, height: rect.height / 2)
        for py in 0..<f.chromaHeight {
            for px in 0..<f.strideUV where !(px >= c.x && px < c.maxX && py >= c.y && py < c.maxY) {
                if f.u[py * f.strideUV + px] != color.u || f.v[py * f.strideUV + px] != color.v { return false }
            }
        }
        return true
    }

    @Test("scaling four quadrants into a sub-rect puts each colour in place and leaves the rest untouched")
    func scaleQuadrantsIntoSubRect() {
        let src = TestFrames.quadrants(width: 64, height: 64)
        var canvas = VideoFrame(width: 320, height: 240, color: TestFrames.gray)
        let rect = Rect(x: 100, y: 50, width: 128, height: 96)
        ImageOps.scale(src, crop: Rect(x: 0, y: 0, width: 64, height: 64), into: &canvas, at: rect)

        // Corners and centres of each quadrant of the destination rect.
        #expect(canvas.pixel(x: 100, y: 50) == TestFrames.red)
        #expect(canvas.pixel(x: 132, y: 74) == TestFrames.red)
        #expect(canvas.pixel(x: 227, y: 50) == TestFrames.green)
        #expect(canvas.pixel(x: 196, y: 74) == TestFrames.green)
        #expect(canvas.pixel(x: 100, y: 145) == TestFrames.blue)
        #expect(canvas.pixel(x: 132, y: 122) == TestFrames.blue)
        #expect(canvas.pixel(x: 227, y: 145) == TestFrames.white)
        #expect(canvas.pixel(x: 196, y: 122) == TestFrames.white)
        #expect(canvas.pixel(x: 99, y: 50) == TestFrames.gray)
        #expect(canvas.pixel(x: 228, y: 146) == TestFrames.gray)
        #expect(untouchedOutside(canvas, rect: rect, color: TestFrames.gray))
    }

    @Test("a crop selects one quadrant of the source")
    func cropSelectsQuadrant() {
        let src = TestFrames.quadrants(width: 64, height: 64)
        var canvas = VideoFrame(width: 160, height: 120, color: TestFrames.gray)
        let rect = Rect(x: 20, y: 10, width: 40, height: 30)
        ImageOps.scale(src, crop: Rect(x: 32, y: 0, width: 32, height: 32), into: &canvas, at: rect)
        for py in rect.y..<rect.maxY {
            for px in rect.x..<rect.maxX where canvas.pixel(x: px, y: py) != TestFrames.green {
                Issue.record("pixel \(px),\(py) is \(canvas.pixel(x: px, y: py))")
                return
            }
        }
        #expect(untouchedOutside(canvas, rect: rect, color: TestFrames.gray))
    }

    @Test("a rect hanging over the canvas edge draws only the visible part, from the matching source part")
    func scaleClipsToCanvas() {
        let src = TestFrames.quadrants(width: 64, height: 64)
        var canvas = VideoFrame(width: 160, height: 120, color: TestFrames.gray)
        // Right half of the 128×64 rect lies beyond x = 160: only red and blue (left half of the source) show.
        ImageOps.scale(
            src, crop: Rect(x: 0, y: 0, width: 64, height: 64), into: &canvas,
            at: Rect(x: 96, y: 0, width: 128, height: 64))
        #expect(canvas.pixel(x: 96, y: 0) == TestFrames.red)
        #expect(canvas.pixel(x: 159, y: 0) == TestFrames.red)
        #expect(canvas.pixel(x: 159, y: 63) == TestFrames.blue)
        #expect(untouchedOutside(canvas, rect: Rect(x: 96, y: 0, width: 64, height: 64), color: TestFrames.gray))
    }

    @Test("empty, off-canvas and absurd rects leave the canvas unchanged")
    func degenerateRectsDoNothing() {
        let src = TestFrames.quadrants(width: 64, height: 64)
        var canvas = VideoFrame(width: 64, height: 48, color: TestFrames.gray)
        let full = Rect(x: 0, y: 0, width: 64, height: 64)
        #expect(!ImageOps.scale(src, crop: full, into: &canvas, at: Rect(x: 10, y: 10, width: 0, height: 20)))
        #expect(!ImageOps.scale(src, crop: full, into: &canvas, at: Rect(x: 64, y: 0, width: 20, height: 20)))
        #expect(!ImageOps.scale(src, crop: full, into: &canvas, at: Rect(x: -40, y: -40, width: 30, height: 30)))
        #expect(
            !ImageOps.scale(
                src, crop: Rect(x: 70, y: 0, width: 10, height: 10), into: &canvas,
                at: Rect(x: 0, y: 0, width: 20, height: 20)))
        #expect(
            !ImageOps.scale(src, crop: full, into: &canvas, at: Rect(x: Int.max - 1, y: 0, width: Int.max, height: 8)))
        ImageOps.fill(&canvas, rect: Rect(x: 0, y: 0, width: -4, height: 8), color: TestFrames.red)
        ImageOps.fill(&canvas, rect: Rect(x: Int.min, y: 0, width: Int.max, height: 8), color: TestFrames.red)
        #expect(untouchedOutside(canvas, rect: Rect(x: 0, y: 0, width: 0, height: 0), color: TestFrames.gray))
    }

    @Test("a source wider than libyuv takes is refused, reported, and leaves the canvas unchanged")
    func tooWideSourceIsReportedAsNotPainted() {
        let wide = VideoFrame(width: 40_000, height: 2, color: TestFrames.red)
        var canvas = VideoFrame(width: 64, height: 48, color: TestFrames.gray)
        let painted = ImageOps.scale(
            wide, crop: Rect(x: 0, y: 0, width: 40_000, height: 2), into: &canvas,
            at: Rect(x: 0, y: 0, width: 64, height: 48))
        #expect(!painted)
        #expect(untouchedOutside(canvas, rect: Rect(x: 0, y: 0, width: 0, height: 0), color: TestFrames.gray))
        let src = TestFrames.quadrants(width: 64, height: 64)
        #expect(
            ImageOps.scale(
                src, crop: Rect(x: 0, y: 0, width: 64, height: 64), into: &canvas,
                at: Rect(x: 0, y: 0, width: 32, height: 32)))
    }

    @Test("fill sets exactly the rect, luma and chroma")
    func fillExact() {
        var canvas = VideoFrame(width: 64, height: 48, color: TestFrames.gray)
        let rect = Rect(x: 10, y: 20, width: 30, height: 16)
        let color = YUVColor(y: 200, u: 50, v: 220)
        ImageOps.fill(&canvas, rect: rect, color: color)
        for py in rect.y..<rect.maxY {
            for px in rect.x..<rect.maxX where canvas.pixel(x: px, y: py) != color {
                Issue.record("pixel \(px),\(py) is \(canvas.pixel(x: px, y: py))")
                return
            }
        }
        #expect(untouchedOutside(canvas, rect: rect, color: TestFrames.gray))
    }

    @Test("fill of a rect past the frame edge is clipped to the frame")
    func fillClipsToFrame() {
        var canvas = VideoFrame(width: 64, height: 48, color: TestFrames.gray)
        ImageOps.fill(&canvas, rect: Rect(x: 40, y: 30, width: 100, height: 100), color: TestFrames.blue)
        #expect(canvas.pixel(x: 63, y: 47) == TestFrames.blue)
        #expect(untouchedOutside(canvas, rect: Rect(x: 40, y: 30, width: 24, height: 18), color: TestFrames.gray))
    }

    @Test(
        "rgb of known colours is within ±2 of the expected R,G,B bytes",
        arguments: [
            (UInt8(200), UInt8(100), UInt8(50)), (255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 255), (16, 128, 240),
        ])
    func rgbOfKnownColour(r: UInt8, g: UInt8, b: UInt8) {
        let frame = VideoFrame(width: 6, height: 4, color: YUVColor(r: r, g: g, b: b))
        let rgb = ImageOps.rgb(frame)
        #expect(rgb.count == 6 * 4 * 3)
        for i in stride(from: 0, to: rgb.count, by: 3) {
            #expect(
                abs(Int(rgb[i]) - Int(r)) <= 2 && abs(Int(rgb[i + 1]) - Int(g)) <= 2
                    && abs(Int(rgb[i + 2]) - Int(b)) <= 2,
                "pixel \(i / 3): \(rgb[i]),\(rgb[i + 1]),\(rgb[i + 2]) vs \(r),\(g),\(b)")
        }
    }

    @Test("uniform blend: below + (src − below)·alpha rounded half up, only inside the rect")
    func uniformBlend() {
        let src = VideoFrame(width: 32, height: 16, color: YUVColor(y: 200, u: 60, v: 181))
        var dst = VideoFrame(width: 32, height: 16, color: YUVColor(y: 100, u: 128, v: 128))
        let rect = Rect(x: 4, y: 2, width: 10, height: 6)
        ImageOps.blend(src, into: &dst, rect: rect, alpha: 0.5)
        // 100 + 50 = 150; 128 − 34 = 94; 128 + 26.5 → 155 (half up).
        #expect(dst.pixel(x: 4, y: 2) == YUVColor(y: 150, u: 94, v: 155))
        #expect(dst.pixel(x: 13, y: 7) == YUVColor(y: 150, u: 94, v: 155))
        #expect(untouchedOutside(dst, rect: rect, color: YUVColor(y: 100, u: 128, v: 128)))
        ImageOps.blend(src, into: &dst, rect: rect, alpha: 1)
        #expect(dst.pixel(x: 8, y: 4) == YUVColor(y: 200, u: 60, v: 181))
        ImageOps.blend(VideoFrame(width: 32, height: 16), into: &dst, rect: rect, alpha: 0)
        ImageOps.blend(VideoFrame(width: 32, height: 16), into: &dst, rect: rect, alpha: .nan)
        ImageOps.blend(VideoFrame(width: 30, height: 16), into: &dst, rect: rect, alpha: 1)  // size mismatch
        #expect(dst.pixel(x: 8, y: 4) == YUVColor(y: 200, u: 60, v: 181))
    }

    @Test("per-pixel blend weights by alpha × opacity and is cut at the frame edge")
    func alphaBlend() {
        let image = VideoFrame(width: 4, height: 4, color: YUVColor(y: 220, u: 20, v: 240))
        // Columns: 255, 255, 0, 0 → chroma alpha 255 for the left block column, 0 for the right.
        let alpha: [UInt8] = (0..<4).flatMap { _ -> [UInt8] in [255, 255, 0, 0] }
        let chroma = ImageOps.chromaAlpha(alpha, width: 4, height: 4)
        #expect(chroma == [255, 0, 255, 0])
        var dst = VideoFrame(width: 8, height: 6, color: YUVColor(y: 20, u: 120, v: 120))
        ImageOps.blend(image, alpha: alpha, chromaAlpha: chroma, opacity: 0.5, into: &dst, x: 6, y: 4)
        // Only the 2×2 corner (image columns 0…1, rows 0…1) is on the frame: opaque × 0.5.
        #expect(dst.pixel(x: 6, y: 4) == YUVColor(y: 120, u: 70, v: 180))
        #expect(dst.pixel(x: 7, y: 5) == YUVColor(y: 120, u: 70, v: 180))
        #expect(
            untouchedOutside(dst, rect: Rect(x: 6, y: 4, width: 2, height: 2), color: YUVColor(y: 20, u: 120, v: 120)))
        var whole = VideoFrame(width: 8, height: 8, color: YUVColor(y: 20, u: 120, v: 120))
        ImageOps.blend(image, alpha: alpha, chromaAlpha: chroma, opacity: 1, into: &whole, x: 2, y: 2)
        #expect(whole.pixel(x: 3, y: 3) == YUVColor(y: 220, u: 20, v: 240))
        #expect(whole.pixel(x: 4, y: 3) == YUVColor(y: 20, u: 120, v: 120))
        // Mismatched alpha planes draw nothing.
        ImageOps.blend(image, alpha: [1, 2, 3], chromaAlpha: chroma, opacity: 1, into: &whole, x: 0, y: 0)
        #expect(whole.pixel(x: 0, y: 0) == YUVColor(y: 20, u: 120, v: 120))
    }

    @Test("scalePlane lines up with scale: the same crop lands on the same pixels")
    func scalePlaneMatchesScale() {
        // A 16×16 plane, 0 in the left half, 255 in the right; crop the right 8 columns, 1:1 into (2, 2).
        let plane: [UInt8] = (0..<16).flatMap { _ -> [UInt8] in
            [UInt8](repeating: 0, count: 8) + [UInt8](repeating: 255, count: 8)
        }
        var out = [UInt8](repeating: 7, count: 12 * 12)
        ImageOps.scalePlane(
            plane, width: 16, height: 16, crop: Rect(x: 8, y: 0, width: 8, height: 16),
            into: &out, width: 12, height: 12, at: Rect(x: 2, y: 2, width: 8, height: 16))
        #expect(out[2 * 12 + 2] == 255 && out[11 * 12 + 9] == 255)
        #expect(out[1 * 12 + 2] == 7 && out[2 * 12 + 10] == 7 && out[2 * 12 + 1] == 7)
        // Too-small buffers are refused, not overrun.
        var tiny = [UInt8](repeating: 7, count: 4)
        ImageOps.scalePlane(
            plane, width: 16, height: 16, crop: Rect(x: 0, y: 0, width: 16, height: 16),
            into: &tiny, width: 12, height: 12, at: Rect(x: 0, y: 0, width: 12, height: 12))
        #expect(tiny == [7, 7, 7, 7])
    }
}
