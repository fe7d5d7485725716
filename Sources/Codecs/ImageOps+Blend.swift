import CYUV
import Media

/// Alpha operations for the compositor: scaling an alpha plane alongside its picture, and blending.
///
/// Blending is a tight Swift loop over unsafe buffer pointers rather than libyuv's `BlendPlane`/`I420Blend`:
/// those compute `(a·s0 + (255−a)·s1 + 255) >> 8`, which is off by one against the rule the compositor
/// promises (`out = below + (tile − below)·alpha`, rounded half up) for many inputs. Weights are 16-bit
/// fixed point (alpha · 65536), so alpha 0.5 is exact and alpha 1 reproduces the tile exactly.
/// Nothing here allocates except `chromaAlpha`, which the compositor calls once per cached image.
extension ImageOps {
    /// Scales the sub-rectangle `crop` of an 8-bit `src` plane (`srcWidth`×`srcHeight`, stride = width) into
    /// the `dstWidth`×`dstHeight` plane `dst` at `rect` (bilinear, libyuv `ScalePlane`), with the same
    /// clipping and even alignment as `scale`, so an alpha plane scaled here lines up with its picture.
    public static func scalePlane(
        _ src: [UInt8], width srcWidth: Int, height srcHeight: Int, crop: Rect,
        into dst: inout [UInt8], width dstWidth: Int, height dstHeight: Int, at rect: Rect
    ) {
        guard src.count >= srcWidth * srcHeight, dst.count >= dstWidth * dstHeight,
            let (from, to) = mapping(
                crop: crop, sourceWidth: srcWidth, sourceHeight: srcHeight,
                rect: rect, destWidth: dstWidth, destHeight: dstHeight)
        else { return }
        src.withUnsafeBufferPointer { s in
            dst.withUnsafeMutableBufferPointer { d in
                guard let s = s.baseAddress, let d = d.baseAddress else { return }
                ScalePlane(
                    s + from.y * srcWidth + from.x, Int32(srcWidth), Int32(from.width), Int32(from.height),
                    d + to.y * dstWidth + to.x, Int32(dstWidth), Int32(to.width), Int32(to.height),
                    kFilterBilinear)
            }
        }
    }

    /// A chroma-resolution alpha plane (`(width+1)/2 × (height+1)/2`): each value the rounded mean of its
    /// 2×2 luma block (edge samples repeated for odd sizes). Allocates: call it once per cached image.
    public static func chromaAlpha(_ alpha: [UInt8], width: Int, height: Int) -> [UInt8] {
        let cw = (width + 1) / 2, ch = (height + 1) / 2
        guard width > 0, height > 0, alpha.count >= width * height else { return [] }
        var out = [UInt8](repeating: 0, count: cw * ch)
        for cy in 0..<ch {
            let y0 = cy * 2, y1 = min(cy * 2 + 1, height - 1)
            for cx in 0..<cw {
                let x0 = cx * 2, x1 = min(cx * 2 + 1, width - 1)
                let sum =
                    Int(alpha[y0 * width + x0]) + Int(alpha[y0 * width + x1])
                    + Int(alpha[y1 * width + x0]) + Int(alpha[y1 * width + x1])
                out[cy * cw + cx] = UInt8((sum + 2) / 4)
            }
        }
        return out
    }

    /// Blends `rect` of `src` over the same rect of `dst` with one alpha for every pixel:
    /// `dst = dst + (src − dst)·alpha`, rounded, for Y, U and V. The frames must be the same size (the
    /// compositor's scratch frame and its canvas); `rect` is clipped and even-aligned like `fill`.
    /// alpha ≤ 0 (or NaN) leaves `dst` alone; alpha ≥ 1 copies.
    public static func blend(_ src: VideoFrame, into dst: inout VideoFrame, rect: Rect, alpha: Double) {
        guard src.width == dst.width, src.height == dst.height, rect.isSane, alpha > 0 else { return }
        let r = rect.aligned(width: dst.width, height: dst.height)
        guard !r.isEmpty else { return }
        let weight = min(65536, Int((alpha * 65536).rounded()))
        let c = chromaRect(r)
        let sY = src.strideY, sUV = src.strideUV
        src.y.withUnsafeBufferPointer { s in
            dst.y.withUnsafeMutableBufferPointer { d in blendPlane(s, sY, d, sY, r, weight: weight) }
        }
        src.u.withUnsafeBufferPointer { s in
            dst.u.withUnsafeMutableBufferPointer { d in blendPlane(s, sUV, d, sUV, c, weight: weight) }
        }
        src.v.withUnsafeBufferPointer { s in
            dst.v.withUnsafeMutableBufferPointer { d in blendPlane(s, sUV, d, sUV, c, weight: weight) }
        }
    }

    /// Blends a whole `image` whose top-left corner goes to (`x`, `y`) of `dst` (even, or it is floored),
    /// weighting each pixel by `alpha` (luma resolution, `image.width·image.height`) or `chromaAlpha`
    /// (chroma resolution) times `opacity`. The part outside `dst` is cut. Mismatched planes draw nothing.
    public static func blend(
        _ image: VideoFrame, alpha: [UInt8], chromaAlpha: [UInt8], opacity: Double,
        into dst: inout VideoFrame, x: Int, y: Int
    ) {
        guard alpha.count == image.width * image.height, chromaAlpha.count == image.strideUV * image.chromaHeight,
            Rect(x: x, y: y, width: image.width, height: image.height).isSane, opacity > 0
        else { return }
        let ox = x & ~1, oy = y & ~1
        let r = Rect(x: ox, y: oy, width: image.width, height: image.height).aligned(
            width: dst.width, height: dst.height)
        guard !r.isEmpty else { return }
        let opacity16 = min(65536, Int((opacity * 65536).rounded()))
        let c = chromaRect(r)
        // The image-relative origin of the visible part, in luma and chroma samples.
        let sx = r.x - ox, sy = r.y - oy
        let dY = dst.strideY, dUV = dst.strideUV, iY = image.strideY, iUV = image.strideUV
        alpha.withUnsafeBufferPointer { a in
            image.y.withUnsafeBufferPointer { s in
                dst.y.withUnsafeMutableBufferPointer { d in
                    blendPlane(s, iY, d, dY, r, alpha: a, from: (sx, sy), opacity16: opacity16)
                }
            }
        }
        chromaAlpha.withUnsafeBufferPointer { a in
            image.u.withUnsafeBufferPointer { s in
                dst.u.withUnsafeMutableBufferPointer { d in
                    blendPlane(s, iUV, d, dUV, c, alpha: a, from: (sx / 2, sy / 2), opacity16: opacity16)
                }
            }
            image.v.withUnsafeBufferPointer { s in
                dst.v.withUnsafeMutableBufferPointer { d in
                    blendPlane(s, iUV, d, dUV, c, alpha: a, from: (sx / 2, sy / 2), opacity16: opacity16)
                }
            }
        }
    }

    /// The chroma samples an even-aligned luma rect covers (a rect ending on an odd frame edge takes the
    /// last chroma column/row too).
    static func chromaRect(_ r: Rect) -> Rect {
        Rect(x: r.x / 2, y: r.y / 2, width: (r.maxX + 1) / 2 - r.x / 2, height: (r.maxY + 1) / 2 - r.y / 2)
    }

    /// `below + ((tile − below)·weight + 2¹⁵) >> 16`: round half up, never outside [below, tile].
    @inline(__always)
    static func mix(_ below: UInt8, _ tile: UInt8, _ weight: Int) -> UInt8 {
        let b = Int(below)
        return UInt8(truncatingIfNeeded: b + (((Int(tile) - b) * weight + 32768) >> 16))
    }

    /// Uniform-weight blend of `r` (same coordinates in both planes).
    private static func blendPlane(
        _ src: UnsafeBufferPointer<UInt8>, _ srcStride: Int,
        _ dst: UnsafeMutableBufferPointer<UInt8>, _ dstStride: Int,
        _ r: Rect, weight: Int
    ) {
        guard let s = src.baseAddress, let d = dst.baseAddress,
            (r.maxY - 1) * srcStride + r.maxX <= src.count, (r.maxY - 1) * dstStride + r.maxX <= dst.count
        else { return }
        for row in r.y..<r.maxY {
            let sp = s + row * srcStride, dp = d + row * dstStride
            if weight >= 65536 {
                (dp + r.x).update(from: sp + r.x, count: r.width)
            } else {
                for x in r.x..<r.maxX { dp[x] = mix(dp[x], sp[x], weight) }
            }
        }
    }

    /// Per-pixel-alpha blend: `r` in destination coordinates, `from` the matching source origin
    /// (alpha has the source plane's stride).
    private static func blendPlane(
        _ src: UnsafeBufferPointer<UInt8>, _ srcStride: Int,
        _ dst: UnsafeMutableBufferPointer<UInt8>, _ dstStride: Int, _ r: Rect,
        alpha: UnsafeBufferPointer<UInt8>, from: (x: Int, y: Int), opacity16: Int
    ) {
        let lastSource = (from.y + r.height - 1) * srcStride + from.x + r.width
        guard let s = src.baseAddress, let d = dst.baseAddress, let a = alpha.baseAddress,
            lastSource <= src.count, lastSource <= alpha.count,
            (r.maxY - 1) * dstStride + r.maxX <= dst.count
        else { return }
        for row in 0..<r.height {
            let sp = s + (from.y + row) * srcStride + from.x, ap = a + (from.y + row) * srcStride + from.x
            let dp = d + (r.y + row) * dstStride + r.x
            for x in 0..<r.width {
                let alpha = Int(ap[x])
                if alpha == 0 { continue }
                // alpha·opacity in 1/65536: 255 at opacity 1 gives exactly 65536.
                let weight = (alpha * opacity16 + 127) / 255
                dp[x] = mix(dp[x], sp[x], weight)
            }
        }
    }
}
