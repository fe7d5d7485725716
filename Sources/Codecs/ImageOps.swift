import CYUV
import Media

/// libyuv operations on I420 frames: pure functions over caller-owned frames, no allocation
/// (they run per tile per tick in the compositor, so they write straight into the caller's planes).
///
/// Rectangles are clipped to their frames and snapped to even luma coordinates, because I420 chroma
/// covers 2×2 luma pixels; nothing is ever written outside the destination rectangle or frame.
public enum ImageOps {
    /// Scales the sub-rectangle `crop` of `src` into `dst` at `rect` (bilinear).
    ///
    /// `crop` is clipped to `src`; where `rect` hangs over the edge of `dst`, only the visible part is drawn,
    /// from the matching part of `crop` (so a tile sliding off the canvas is cut, not squeezed).
    /// Empty rectangles do nothing. Returns whether it painted: false when nothing shows, or when libyuv refused
    /// (a source side over 32768 pixels), so a caller that relies on the area being repainted can paint it.
    @discardableResult
    public static func scale(_ src: VideoFrame, crop: Rect, into dst: inout VideoFrame, at rect: Rect) -> Bool {
        scale(Picture(src), crop: crop, into: &dst, at: rect)
    }

    /// `scale` from any picture (a decoder's own buffer included).
    @discardableResult
    public static func scale(_ src: Picture, crop: Rect, into dst: inout VideoFrame, at rect: Rect) -> Bool {
        src.withPlanes { scale($0, crop: crop, into: &dst, at: rect) }
    }

    static func scale(_ src: PlanePointers, crop: Rect, into dst: inout VideoFrame, at rect: Rect) -> Bool {
        guard
            let (from, to) = mapping(
                crop: crop, sourceWidth: src.width, sourceHeight: src.height,
                rect: rect, destWidth: dst.width, destHeight: dst.height)
        else { return false }
        var status: Int32 = -1
        let dstStrideY = dst.strideY, dstStrideUV = dst.strideUV
        let dstOffY = to.y * dstStrideY + to.x, dstOffUV = (to.y / 2) * dstStrideUV + to.x / 2
        dst.y.withUnsafeMutableBufferPointer { dy in
            dst.u.withUnsafeMutableBufferPointer { du in
                dst.v.withUnsafeMutableBufferPointer { dv in
                    guard let dy = dy.baseAddress, let du = du.baseAddress, let dv = dv.baseAddress else { return }
                    status = I420Scale(
                        src.y + from.y * src.strideY + from.x, Int32(src.strideY),
                        src.u + (from.y / 2) * src.strideU + from.x / 2, Int32(src.strideU),
                        src.v + (from.y / 2) * src.strideV + from.x / 2, Int32(src.strideV),
                        Int32(from.width), Int32(from.height),
                        dy + dstOffY, Int32(dstStrideY),
                        du + dstOffUV, Int32(dstStrideUV),
                        dv + dstOffUV, Int32(dstStrideUV),
                        Int32(to.width), Int32(to.height), kFilterBilinear)
                }
            }
        }
        return status == 0
    }

    /// The source and destination rects `scale` works on: `crop` clipped to the source, the visible part of
    /// `rect` in the destination, and the matching part of the crop, both even-aligned. nil when nothing shows.
    /// Shared by the I420 and single-plane (alpha) scalers so a picture and its alpha land on the same pixels.
    static func mapping(
        crop: Rect, sourceWidth: Int, sourceHeight: Int,
        rect: Rect, destWidth: Int, destHeight: Int
    ) -> (from: Rect, to: Rect)? {
        guard crop.isSane, rect.isSane else { return nil }
        let source = crop.intersection(Rect(x: 0, y: 0, width: sourceWidth, height: sourceHeight))
        guard !source.isEmpty, !rect.isEmpty else { return nil }
        let visible = rect.intersection(Rect(x: 0, y: 0, width: destWidth, height: destHeight))
        // Map the visible part of the destination back onto the crop proportionally.
        let sx = Double(source.width) / Double(rect.width), sy = Double(source.height) / Double(rect.height)
        let cx0 = source.x + Int((Double(visible.x - rect.x) * sx).rounded())
        let cy0 = source.y + Int((Double(visible.y - rect.y) * sy).rounded())
        let cx1 = source.x + Int((Double(visible.maxX - rect.x) * sx).rounded())
        let cy1 = source.y + Int((Double(visible.maxY - rect.y) * sy).rounded())
        let from = Rect(x: cx0, y: cy0, width: cx1 - cx0, height: cy1 - cy0).aligned(
            width: sourceWidth, height: sourceHeight)
        let to = visible.aligned(width: destWidth, height: destHeight)
        guard !from.isEmpty, !to.isEmpty else { return nil }
        return (from, to)
    }

    /// Fills `rect` (clipped to `dst`, snapped to even coordinates) with `color` (libyuv `I420Rect`).
    public static func fill(_ dst: inout VideoFrame, rect: Rect, color: YUVColor) {
        guard rect.isSane else { return }
        let r = rect.aligned(width: dst.width, height: dst.height)
        guard !r.isEmpty else { return }
        let strideY = Int32(dst.strideY), strideUV = Int32(dst.strideUV)
        dst.y.withUnsafeMutableBufferPointer { dy in
            dst.u.withUnsafeMutableBufferPointer { du in
                dst.v.withUnsafeMutableBufferPointer { dv in
                    guard let dy = dy.baseAddress, let du = du.baseAddress, let dv = dv.baseAddress else { return }
                    _ = I420Rect(
                        dy, strideY, du, strideUV, dv, strideUV,
                        Int32(r.x), Int32(r.y), Int32(r.width), Int32(r.height),
                        Int32(color.y), Int32(color.u), Int32(color.v))
                }
            }
        }
    }

    /// The whole frame as packed RGB24 in R, G, B byte order (BT.601 limited range), for PNG snapshots and tests.
    /// Allocates the result (not a hot path).
    public static func rgb(_ src: VideoFrame) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: src.width * src.height * 3)
        src.y.withUnsafeBufferPointer { sy in
            src.u.withUnsafeBufferPointer { su in
                src.v.withUnsafeBufferPointer { sv in
                    out.withUnsafeMutableBufferPointer { o in
                        guard let sy = sy.baseAddress, let su = su.baseAddress, let sv = sv.baseAddress,
                            let o = o.baseAddress
                        else { return }
                        // libyuv's "RAW" is R,G,B in memory (its "RGB24" is B,G,R).
                        _ = I420ToRAW(
                            sy, Int32(src.strideY), su, Int32(src.strideUV), sv, Int32(src.strideUV),
                            o, Int32(src.width * 3), Int32(src.width), Int32(src.height))
                    }
                }
            }
        }
        return out
    }
}
