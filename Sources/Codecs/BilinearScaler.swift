import CScale
import Media

/// Scales I420 pictures into rectangles of another I420 frame with a 2-tap bilinear filter: the tiles of
/// the compositor, every tick, which is the one scaling that runs per frame.
///
/// Why not libyuv's `I420Scale` (still used for the one-off image scalings): for sizes without a special
/// kernel (640×360 into a third of a 720p canvas, the 3×3 grid) libyuv's horizontal pass works out every output
/// pixel's source position and weight as it goes, about 1 ns per pixel, and was a tenth of a 9-person room's CPU.
/// Here the positions of each source width → output width are computed once into a table (`CScale`), and a
/// frame's rows are one byte shuffle and one multiply-add per 8 pixels (SSSE3; a C path with the same results
/// elsewhere). The sampling positions are those of libyuv's general `kFilterBilinear` paths; the weights are
/// 7-bit, as in libyuv's SSSE3 code, but rounded differently, so results differ from libyuv's by at most 2 levels.
/// Sizes for which libyuv has a dedicated kernel (its own sampling, and fast already) stay with libyuv: same size,
/// same width, exact 2× upscales, ½, ¾ and ⅜ downscales; so do downscales beyond about 2×.
///
/// Allocates only when it meets a new size pair (a table, kept; at most `tableLimit`, then it starts over) or a
/// wider source (the row buffer grows): nothing per frame in steady state. Geometry (cropping, clipping to the
/// destination, even alignment) is `ImageOps.scale`'s, so both draw exactly the same pixels.
public struct BilinearScaler: Sendable {
    private struct Key: Hashable { let source: Int32, output: Int32 }

    /// Most size pairs kept (each at most a few KiB): a layout animating through sizes would otherwise grow the
    /// cache without end. Two per tile size (luma, chroma), so well above what a room's 64 tiles use at once.
    public static let tableLimit = 256

    private var tables: [Key: [UInt8]] = [:]
    private var row: [UInt8] = []
    private let simd: Int32
    /// Without SIMD the table kernel's C path is slower than libyuv's own (NEON on ARM), so libyuv scales.
    private let useKernel: Bool
    /// Tables built so far (a new size pair); steady once the layout stops changing.
    public private(set) var tablesBuilt = 0
    /// Scalings handed to libyuv: sizes it has a dedicated kernel for, steps too large for the table kernel, or
    /// every scaling on a CPU without the kernel's SIMD path.
    public private(set) var libyuvScalings = 0

    /// `portable: true` takes the kernel's C path even where SIMD is available (tests compare the two).
    /// Otherwise the kernel runs where the CPU has its SIMD path, and libyuv scales everything elsewhere.
    public init(portable: Bool = false) {
        simd = portable ? 0 : cscale_has_simd()
        useKernel = portable || simd != 0
    }

    /// Scales the sub-rectangle `crop` of `src` into `dst` at `rect`, like `ImageOps.scale`. Returns false when it
    /// painted nothing: no part of `rect` on `dst`, the visible part maps to no whole source pixel pair, or libyuv
    /// (which takes the sizes the kernel does not) refused them.
    @discardableResult
    public mutating func scale(_ src: VideoFrame, crop: Rect, into dst: inout VideoFrame, at rect: Rect) -> Bool {
        scale(Picture(src), crop: crop, into: &dst, at: rect)
    }

    /// `scale` from any picture: a participant's decoded picture is read straight from the decoder's buffer.
    @discardableResult
    public mutating func scale(_ src: Picture, crop: Rect, into dst: inout VideoFrame, at rect: Rect) -> Bool {
        src.withPlanes { scale($0, crop: crop, into: &dst, at: rect) }
    }

    private mutating func scale(_ src: PlanePointers, crop: Rect, into dst: inout VideoFrame, at rect: Rect) -> Bool {
        guard
            let (from, to) = ImageOps.mapping(
                crop: crop, sourceWidth: src.width, sourceHeight: src.height,
                rect: rect, destWidth: dst.width, destHeight: dst.height)
        else { return false }
        let chroma = (
            from: (width: (from.width + 1) / 2, height: (from.height + 1) / 2),
            to: (width: (to.width + 1) / 2, height: (to.height + 1) / 2)
        )
        guard useKernel, !Self.libyuvHasKernel(from: (from.width, from.height), to: (to.width, to.height)),
            !Self.libyuvHasKernel(from: chroma.from, to: chroma.to),
            let lumaTable = table(from.width, to.width), let chromaTable = table(chroma.from.width, chroma.to.width)
        else {
            libyuvScalings += 1
            return ImageOps.scale(src, crop: crop, into: &dst, at: rect)
        }
        let rowSize = cscale_row_size(Int32(from.width))
        if row.count < rowSize { row = [UInt8](repeating: 0, count: rowSize) }

        let dstOffY = to.y * dst.strideY + to.x, dstOffUV = (to.y / 2) * dst.strideUV + to.x / 2
        let luma = (from: (width: from.width, height: from.height), to: (width: to.width, height: to.height))
        let (dstStrideY, dstStrideUV) = (dst.strideY, dst.strideUV)
        Self.scalePlane(
            src.y + from.y * src.strideY + from.x, stride: src.strideY, into: &dst.y, at: dstOffY,
            stride: dstStrideY, size: luma, table: lumaTable, row: &row, simd: simd)
        Self.scalePlane(
            src.u + (from.y / 2) * src.strideU + from.x / 2, stride: src.strideU, into: &dst.u, at: dstOffUV,
            stride: dstStrideUV, size: chroma, table: chromaTable, row: &row, simd: simd)
        Self.scalePlane(
            src.v + (from.y / 2) * src.strideV + from.x / 2, stride: src.strideV, into: &dst.v, at: dstOffUV,
            stride: dstStrideUV, size: chroma, table: chromaTable, row: &row, simd: simd)
        return true
    }

    /// One plane through the kernel: `size.from` pixels from `source` into `size.to` pixels of `target` from
    /// `targetOffset`.
    private static func scalePlane(
        _ source: UnsafePointer<UInt8>, stride sourceStride: Int,
        into target: inout [UInt8], at targetOffset: Int, stride targetStride: Int,
        size: (from: (width: Int, height: Int), to: (width: Int, height: Int)),
        table: [UInt8], row: inout [UInt8], simd: Int32
    ) {
        target.withUnsafeMutableBufferPointer { t in
            table.withUnsafeBufferPointer { table in
                row.withUnsafeMutableBufferPointer { r in
                    guard let t = t.baseAddress, let table = table.baseAddress, let r = r.baseAddress else { return }
                    cscale_plane(
                        source, Int32(sourceStride), Int32(size.from.width), Int32(size.from.height),
                        t + targetOffset, Int32(targetStride), Int32(size.to.width), Int32(size.to.height),
                        table, r, simd)
                }
            }
        }
    }

    /// Whether libyuv's `ScalePlane` (bilinear) takes a dedicated path for this plane size pair rather than its
    /// general bilinear one: there its sampling differs from the table kernel's, and it is fast anyway.
    static func libyuvHasKernel(from: (width: Int, height: Int), to: (width: Int, height: Int)) -> Bool {
        let (sw, sh, dw, dh) = (from.width, from.height, to.width, to.height)
        if sw == dw { return true }  // a copy, or vertical-only scaling
        if dw <= sw && dh <= sh
            && (4 * dw == 3 * sw && 4 * dh == 3 * sh || 2 * dw == sw && 2 * dh == sh
                || 8 * dw == 3 * sw && 8 * dh == 3 * sh)
        {
            return true
        }
        return (dw + 1) / 2 == sw && (dh + 1) / 2 == sh  // 2× up
    }

    /// The table for `source` → `output` pixels per row, built on first use; nil when the kernel cannot do it.
    private mutating func table(_ source: Int, _ output: Int) -> [UInt8]? {
        let key = Key(source: Int32(clamping: source), output: Int32(clamping: output))
        if let table = tables[key] { return table.isEmpty ? nil : table }
        if tables.count >= Self.tableLimit { tables.removeAll(keepingCapacity: true) }
        let size = cscale_table_size(key.source, key.output)
        var table = [UInt8](repeating: 0, count: size)
        if size > 0 {
            table.withUnsafeMutableBufferPointer { cscale_table_build($0.baseAddress, key.source, key.output) }
        }
        tables[key] = table  // empty: remembered as unsupported
        tablesBuilt += 1
        return size > 0 ? table : nil
    }
}
