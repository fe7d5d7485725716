import Testing
import Media
@testable import Codecs

@Suite("BilinearScaler")
struct BilinearScalerTests {
    /// A frame whose luma rows all read `row` (chroma mid-grey).
    func rows(_ row: [UInt8], height: Int) -> VideoFrame {
        var f = VideoFrame(width: row.count, height: height, color: YUVColor(y: 0, u: 128, v: 128))
        for py in 0..<height { for px in row.indices { f.y[py * f.strideY + px] = row[px] } }
        return f
    }

    func lumaRow(_ f: VideoFrame, _ py: Int) -> [UInt8] { Array(f.y[(py * f.strideY)..<(py * f.strideY + f.width)]) }

    @Test("halving a row samples between each pair of pixels, as libyuv's bilinear does")
    func halvingAveragesPairs() {
        let src = rows([0, 10, 20, 30, 40, 50, 60, 70], height: 2)
        var dst = VideoFrame(width: 4, height: 2)
        var scaler = BilinearScaler()
        scaler.scale(
            src, crop: Rect(x: 0, y: 0, width: 8, height: 2), into: &dst, at: Rect(x: 0, y: 0, width: 4, height: 2))
        // Positions 0.5, 2.5, 4.5, 6.5: (a·64 + b·64 + 64) >> 7.
        #expect(lumaRow(dst, 0) == [5, 25, 45, 65])
        #expect(lumaRow(dst, 1) == [5, 25, 45, 65])
    }

    @Test("two thirds of a row (the 3×3 grid's ratio) weighs each output by its distance to two source pixels")
    func twoThirds() {
        let src = rows([0, 64, 128, 192, 255, 255, 0, 0, 64], height: 2)
        var dst = VideoFrame(width: 6, height: 2)
        var scaler = BilinearScaler()
        scaler.scale(
            src, crop: Rect(x: 0, y: 0, width: 9, height: 2), into: &dst, at: Rect(x: 0, y: 0, width: 6, height: 2))
        // Step 1.5, start 0.25: positions 0.25, 1.75, 3.25, … (fractions 32/128, 96/128): 3.25 is (192·96 + 255·32 + 64) >> 7.
        #expect(lumaRow(dst, 0) == [16, 112, 208, 255, 0, 48])
    }

    @Test("rows are blended by their distance too: 4 rows to 2 take the middle of each pair")
    func verticalHalving() {
        var src = VideoFrame(width: 4, height: 4, color: YUVColor(y: 0, u: 128, v: 128))
        for py in 0..<4 { for px in 0..<4 { src.y[py * 4 + px] = UInt8(40 * py) } }
        var dst = VideoFrame(width: 2, height: 2)
        var scaler = BilinearScaler()
        scaler.scale(
            src, crop: Rect(x: 0, y: 0, width: 4, height: 4), into: &dst, at: Rect(x: 0, y: 0, width: 2, height: 2))
        #expect(dst.y == [20, 20, 100, 100])
        #expect(dst.u == [128] && dst.v == [128])
    }

    @Test("the SIMD and the portable path give the same bytes for every size, crop and clipping tried")
    func simdMatchesPortable() {
        let src = TestFrames.noise(width: 640, height: 360, seed: 7)
        let cases: [(crop: Rect, rect: Rect)] = [
            (Rect(x: 0, y: 0, width: 640, height: 360), Rect(x: 0, y: 0, width: 426, height: 240)),
            (Rect(x: 0, y: 0, width: 640, height: 360), Rect(x: 854, y: 480, width: 427, height: 240)),
            (Rect(x: 0, y: 0, width: 640, height: 360), Rect(x: 100, y: 60, width: 1000, height: 600)),  // upscale
            (Rect(x: 80, y: 0, width: 480, height: 360), Rect(x: 2, y: 2, width: 318, height: 238)),  // cover crop
            // off the edge
            (Rect(x: 0, y: 0, width: 640, height: 360), Rect(x: 1000, y: 600, width: 400, height: 230)),
            (Rect(x: 3, y: 5, width: 333, height: 201), Rect(x: 10, y: 10, width: 211, height: 147)),  // odd sizes
        ]
        for (crop, rect) in cases {
            var fast = VideoFrame(width: 1280, height: 720, color: TestFrames.gray)
            var portable = fast
            var a = BilinearScaler(), b = BilinearScaler(portable: true)
            a.scale(src, crop: crop, into: &fast, at: rect)
            b.scale(src, crop: crop, into: &portable, at: rect)
            #expect(fast.y == portable.y && fast.u == portable.u && fast.v == portable.v, "crop \(crop) rect \(rect)")
            #expect(a.libyuvScalings == 0, "crop \(crop) rect \(rect)")
        }
    }

    @Test("on noise, every pixel is within 2 levels of libyuv's general bilinear path, down and up")
    func closeToLibyuv() {
        let src = TestFrames.noise(width: 640, height: 360, seed: 11)
        let crop = Rect(x: 0, y: 0, width: 640, height: 360)
        for rect in [
            Rect(x: 426, y: 240, width: 426, height: 240), Rect(x: 100, y: 50, width: 1000, height: 562),
            Rect(x: 0, y: 0, width: 500, height: 300),
        ] {
            var ours = VideoFrame(width: 1280, height: 720, color: TestFrames.gray)
            var theirs = ours
            var scaler = BilinearScaler()
            scaler.scale(src, crop: crop, into: &ours, at: rect)
            ImageOps.scale(src, crop: crop, into: &theirs, at: rect)
            #expect(scaler.libyuvScalings == 0)
            let planes = [(ours.y, theirs.y), (ours.u, theirs.u), (ours.v, theirs.v)]
            let worst = planes.map { zip($0.0, $0.1).map { abs(Int($0) - Int($1)) }.max() ?? 0 }.max() ?? 0
            #expect(worst <= 2, "\(rect): largest difference \(worst)")
        }
    }

    @Test("nothing outside the destination rect is written, including past a partial last block of 8")
    func writesOnlyTheRect() {
        let src = TestFrames.noise(width: 640, height: 360, seed: 3)
        var dst = VideoFrame(width: 320, height: 240, color: TestFrames.gray)
        let rect = Rect(x: 10, y: 20, width: 202, height: 114)  // 202 = 25 blocks of 8 + 2; chroma 101
        var scaler = BilinearScaler()
        scaler.scale(src, crop: Rect(x: 0, y: 0, width: 300, height: 200), into: &dst, at: rect)
        #expect(scaler.libyuvScalings == 0)
        for py in 0..<dst.height {
            for px in 0..<dst.width where !(rect.x..<rect.maxX).contains(px) || !(rect.y..<rect.maxY).contains(py) {
                #expect(dst.y[py * dst.strideY + px] == TestFrames.gray.y, "luma \(px),\(py)")
            }
        }
        let chroma = Rect(x: 5, y: 10, width: 101, height: 57)
        for py in 0..<dst.chromaHeight {
            for px in 0..<dst.strideUV
            where !(chroma.x..<chroma.maxX).contains(px) || !(chroma.y..<chroma.maxY).contains(py) {
                #expect(
                    dst.u[py * dst.strideUV + px] == TestFrames.gray.u
                        && dst.v[py * dst.strideUV + px] == TestFrames.gray.v)
            }
        }
    }

    @Test("only the crop is read: a black crop inside a white frame scales to black, edges included")
    func readsOnlyTheCrop() {
        var src = VideoFrame(width: 200, height: 120, color: YUVColor(y: 255, u: 255, v: 255))
        let crop = Rect(x: 40, y: 20, width: 120, height: 80)
        for py in crop.y..<crop.maxY { for px in crop.x..<crop.maxX { src.y[py * src.strideY + px] = 0 } }
        for py in (crop.y / 2)..<(crop.maxY / 2) {
            for px in (crop.x / 2)..<(crop.maxX / 2) {
                src.u[py * src.strideUV + px] = 0
                src.v[py * src.strideUV + px] = 0
            }
        }
        for (size, portable) in [((80, 54), false), ((80, 54), true), ((190, 110), false)] {
            var dst = VideoFrame(width: size.0, height: size.1)
            var scaler = BilinearScaler(portable: portable)
            scaler.scale(src, crop: crop, into: &dst, at: Rect(x: 0, y: 0, width: size.0, height: size.1))
            #expect(scaler.libyuvScalings == 0)
            #expect(
                dst.y.allSatisfy { $0 == 0 } && dst.u.allSatisfy { $0 == 0 } && dst.v.allSatisfy { $0 == 0 },
                "\(size) portable \(portable)")
        }
    }

    @Test("one table per size pair, built once: a steady tile builds nothing more")
    func tablesAreBuiltOnce() {
        let src = TestFrames.noise(width: 640, height: 360, seed: 5)
        var canvas = VideoFrame(width: 1280, height: 720)
        var scaler = BilinearScaler()
        for _ in 0..<5 {
            scaler.scale(
                src, crop: Rect(x: 0, y: 0, width: 640, height: 360), into: &canvas,
                at: Rect(x: 0, y: 0, width: 426, height: 240))
            scaler.scale(
                src, crop: Rect(x: 0, y: 0, width: 640, height: 360), into: &canvas,
                at: Rect(x: 426, y: 0, width: 426, height: 240))
        }
        #expect(scaler.tablesBuilt == 2)  // 640 → 426 luma, 320 → 213 chroma
    }

    @Test(
        "sizes libyuv has its own kernel for (copy, same width, 2x up, 1/2 and 3/4 down) and large downscales go to libyuv, with exactly its result"
    )
    func libyuvWhereTheKernelDoesNotApply() {
        let src = TestFrames.noise(width: 640, height: 360, seed: 9)
        let sizes = [(640, 360), (1280, 720), (320, 180), (480, 270), (640, 200), (160, 90)]
        for (width, height) in sizes {
            let rect = Rect(x: 0, y: 0, width: width, height: height)
            var ours = VideoFrame(width: 1280, height: 720, color: TestFrames.gray)
            var theirs = ours
            var scaler = BilinearScaler()
            scaler.scale(src, crop: Rect(x: 0, y: 0, width: 640, height: 360), into: &ours, at: rect)
            ImageOps.scale(src, crop: Rect(x: 0, y: 0, width: 640, height: 360), into: &theirs, at: rect)
            #expect(scaler.libyuvScalings == 1, "\(width)x\(height)")
            #expect(ours.y == theirs.y && ours.u == theirs.u && ours.v == theirs.v, "\(width)x\(height)")
        }
    }

    @Test("a picture with padded lines (a decoder's buffer) scales exactly like the same picture packed, on every path")
    func paddedLinesScaleLikePacked() {
        let src = TestFrames.noise(width: 640, height: 360, seed: 11)
        let padded = Picture(PaddedPicture(src, padding: (37, 5, 22)))
        let crops = [Rect(x: 0, y: 0, width: 640, height: 360), Rect(x: 32, y: 18, width: 500, height: 300)]
        // 426×240: the table kernel; 640×360, 320×180, 1280×720: libyuv's own kernels.
        let rects = [
            Rect(x: 0, y: 0, width: 426, height: 240), Rect(x: 100, y: 60, width: 640, height: 360),
            Rect(x: 2, y: 2, width: 320, height: 180), Rect(x: -200, y: -100, width: 1280, height: 720),
        ]
        for crop in crops {
            for rect in rects {
                var packed = VideoFrame(width: 1280, height: 720, color: TestFrames.gray), fromPadded = packed
                var a = BilinearScaler(), b = BilinearScaler()
                #expect(a.scale(src, crop: crop, into: &packed, at: rect))
                #expect(b.scale(padded, crop: crop, into: &fromPadded, at: rect))
                #expect(
                    packed.y == fromPadded.y && packed.u == fromPadded.u && packed.v == fromPadded.v, "\(crop) \(rect)")
            }
        }
    }
}

/// A picture whose lines are longer than its width (by a different amount in each plane), the padding filled with
/// white: reading it as if packed, or with another plane's stride, would show.
final class PaddedPicture: ExternalPicture, @unchecked Sendable {
    let width: Int, height: Int
    private let strides: (y: Int, u: Int, v: Int)
    private let y: [UInt8], u: [UInt8], v: [UInt8]

    init(_ f: VideoFrame, padding: (y: Int, u: Int, v: Int)) {
        width = f.width
        height = f.height
        strides = (f.strideY + padding.y, f.strideUV + padding.u, f.strideUV + padding.v)
        func pad(_ plane: [UInt8], width: Int, rows: Int, stride: Int) -> [UInt8] {
            var out = [UInt8](repeating: 255, count: stride * rows)
            for r in 0..<rows { out[(r * stride)..<(r * stride + width)] = plane[(r * width)..<(r * width + width)] }
            return out
        }
        y = pad(f.y, width: f.strideY, rows: f.height, stride: strides.y)
        u = pad(f.u, width: f.strideUV, rows: f.chromaHeight, stride: strides.u)
        v = pad(f.v, width: f.strideUV, rows: f.chromaHeight, stride: strides.v)
    }

    func withPlanes<R>(_ body: (PlanePointers) -> R) -> R {
        y.withUnsafeBufferPointer { y in
            u.withUnsafeBufferPointer { u in
                v.withUnsafeBufferPointer { v in
                    body(
                        PlanePointers(
                            width: width, height: height, y: y.baseAddress!, u: u.baseAddress!, v: v.baseAddress!,
                            strideY: strides.y, strideU: strides.u, strideV: strides.v))
                }
            }
        }
    }
}
