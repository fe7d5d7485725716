import CAVCodec
import Media

/// Decodes PNG files (background images, watermarks, placeholder images) with libavcodec's `png` decoder
/// into an I420 picture plus a full-resolution alpha plane.
///
/// Every pixel format the decoder produces (rgb24, rgba, rgb48be, rgba64be, gray, gray16be, ya8, ya16be,
/// pal8, monob) is converted in Swift with exactly the BT.601 limited-range formula of `YUVColor(r:g:b:)`, so
/// an sRGB colour in a PNG lands on the same YUV as the same colour named in a layout. (libyuv's `ABGRToI420`
/// uses slightly different integer coefficients, e.g. Y 82 instead of 81 for pure red, and libswscale is not
/// linked.) Chroma is the alpha-weighted average of each 2×2 block, so fully transparent pixels do not tint
/// the visible edge. Odd sizes are padded to even by repeating the last column/row (alpha included).
///
/// Input is hostile: at most `maxInputBytes` bytes and `maxSide`×`maxSide` pixels (enforced by libavcodec's
/// `max_pixels` before it allocates, and again on the frame), and any libavcodec failure becomes a
/// `CodecError` carrying `av_strerror`'s text. Not a hot path: images are decoded once when set.
///
/// `@unchecked Sendable`: the codec context is not thread-safe; an instance is confined to one thread at a
/// time (the request that set the image).
public final class PNGDecoder: @unchecked Sendable {
    /// Larger images are refused (4096² RGBA is 64 MiB inside libavcodec).
    public static let maxSide = 4096
    /// Larger files are refused before libavcodec sees them.
    public static let maxInputBytes = 16 << 20

    private var context: UnsafeMutablePointer<AVCodecContext>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var packet: UnsafeMutablePointer<AVPacket>?

    public init() throws(CodecError) {
        _ = AVError.quietLogs
        guard let codec = avcodec_find_decoder(AV_CODEC_ID_PNG) else { throw AVError.error("png decoder not found") }
        // All stored properties are set from here on: a throw runs deinit, which frees what was allocated.
        context = avcodec_alloc_context3(codec)
        frame = av_frame_alloc()
        packet = av_packet_alloc()
        guard let ctx = context, frame != nil, packet != nil else {
            throw AVError.error("avcodec/av_frame/av_packet alloc failed")
        }
        // libavcodec refuses larger pictures itself, before allocating them.
        ctx.pointee.max_pixels = Int64(Self.maxSide * Self.maxSide)
        ctx.pointee.thread_count = 1
        let status = avcodec_open2(ctx, codec, nil)
        guard status >= 0 else { throw AVError.error(status, "avcodec_open2(png)") }
    }

    deinit {
        avcodec_free_context(&context)
        av_frame_free(&frame)
        av_packet_free(&packet)
    }

    /// One PNG file → picture and alpha. Throws for empty, oversized, truncated or corrupt input.
    public func decode(_ bytes: [UInt8]) throws(CodecError) -> AlphaPicture {
        guard !bytes.isEmpty else { throw AVError.error("PNG input is empty") }
        guard bytes.count <= Self.maxInputBytes else {
            throw AVError.error("PNG input is \(bytes.count) bytes; at most \(Self.maxInputBytes) accepted")
        }
        guard bytes.count >= 8, bytes[0..<8].elementsEqual([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) else {
            throw AVError.error("not a PNG file (bad signature)")
        }
        guard let context, let frame, let packet else { throw AVError.error("PNG decoder not initialised") }
        // A previous call may have ended in EOF or an error: start from a clean decoder state.
        avcodec_flush_buffers(context)
        defer {
            av_packet_unref(packet)
            av_frame_unref(frame)
        }
        var status = av_new_packet(packet, Int32(bytes.count))  // zeroed input padding included
        guard status >= 0, let data = packet.pointee.data else { throw AVError.error(status, "av_new_packet") }
        bytes.withUnsafeBufferPointer { src in
            if let base = src.baseAddress { data.update(from: base, count: bytes.count) }
        }
        status = avcodec_send_packet(context, packet)
        guard status >= 0 else { throw AVError.error(status, "avcodec_send_packet(png)") }
        status = avcodec_receive_frame(context, frame)
        if status == AVError.again {
            // Drain: a decoder that buffers wants end of stream before it hands the frame out.
            status = avcodec_send_packet(context, nil)
            guard status >= 0 else { throw AVError.error(status, "avcodec_send_packet(png, flush)") }
            status = avcodec_receive_frame(context, frame)
        }
        guard status >= 0 else { throw AVError.error(status, "avcodec_receive_frame(png)") }
        return try Self.convert(frame)
    }

    /// One PNG file, with a decoder made for it.
    public static func decode(_ bytes: [UInt8]) throws(CodecError) -> AlphaPicture {
        try PNGDecoder().decode(bytes)
    }

    /// The decoded frame as I420 + alpha, two rows at a time through a reusable RGBA row pair.
    private static func convert(_ frame: UnsafeMutablePointer<AVFrame>) throws(CodecError) -> AlphaPicture {
        let w = Int(frame.pointee.width), h = Int(frame.pointee.height)
        guard (1...maxSide).contains(w), (1...maxSide).contains(h) else {
            throw AVError.error("PNG size \(w)x\(h) outside 1...\(maxSide)")
        }
        let format = AVPixelFormat(rawValue: frame.pointee.format)
        guard let layout = PNGRowReader(format: format, width: w) else {
            throw AVError.error("PNG pixel format \(frame.pointee.format) is not supported")
        }
        guard let plane = frame.pointee.data.0, Int(frame.pointee.linesize.0) >= layout.rowBytes else {
            throw AVError.error("PNG frame has no usable plane")
        }
        let palette = frame.pointee.data.1.map { UnsafePointer($0) }
        if layout.needsPalette && palette == nil { throw AVError.error("PNG palette frame has no palette") }
        let lineSize = Int(frame.pointee.linesize.0)

        let width = w + (w & 1), height = h + (h & 1)
        var picture = VideoFrame(width: width, height: height)
        var alpha = [UInt8](repeating: 255, count: width * height)
        // Two RGBA rows of the padded width; the padding column repeats the last pixel.
        var rows = [UInt8](repeating: 0, count: 2 * width * 4)
        let strideUV = picture.strideUV
        rows.withUnsafeMutableBufferPointer { rowBuffer in
            guard let top = rowBuffer.baseAddress else { return }
            let bottom = top + width * 4
            for pair in stride(from: 0, to: height, by: 2) {
                let r0 = min(pair, h - 1), r1 = min(pair + 1, h - 1)
                layout.read(UnsafePointer(plane + r0 * lineSize), palette: palette, into: top)
                layout.read(UnsafePointer(plane + r1 * lineSize), palette: palette, into: bottom)
                if w & 1 == 1 {
                    for c in 0..<4 {
                        top[w * 4 + c] = top[(w - 1) * 4 + c]
                        bottom[w * 4 + c] = bottom[(w - 1) * 4 + c]
                    }
                }
                for dy in 0..<2 {
                    let row = dy == 0 ? top : bottom, base = (pair + dy) * width
                    for x in 0..<width {
                        let p = row + x * 4
                        picture.y[base + x] = luma(p[0], p[1], p[2])
                        alpha[base + x] = p[3]
                    }
                }
                for cx in 0..<strideUV {
                    let (u, v) = chroma(top + cx * 8, bottom + cx * 8)
                    picture.u[(pair / 2) * strideUV + cx] = u
                    picture.v[(pair / 2) * strideUV + cx] = v
                }
            }
        }
        guard let result = AlphaPicture(picture: picture, alpha: alpha) else {
            throw AVError.error("PNG alpha plane size mismatch")
        }
        return result
    }

    /// `YUVColor(r:g:b:)`'s luma, the same expression so the rounding matches bit for bit.
    @inline(__always)
    private static func luma(_ r: UInt8, _ g: UInt8, _ b: UInt8) -> UInt8 {
        let r = Double(r), g = Double(g), b = Double(b)
        return clamp(16 + (65.481 * r + 128.553 * g + 24.966 * b) / 255)
    }

    /// U and V of a 2×2 block (two RGBA pixels from each row), from its alpha-weighted mean colour
    /// (the plain mean when the block is fully transparent).
    @inline(__always)
    private static func chroma(
        _ top: UnsafeMutablePointer<UInt8>, _ bottom: UnsafeMutablePointer<UInt8>
    ) -> (UInt8, UInt8) {
        var sr = 0, sg = 0, sb = 0, sa = 0
        // No array literal here: this runs per 2×2 block.
        for i in 0..<4 {
            let p = (i < 2 ? top : bottom) + (i & 1) * 4
            let a = Int(p[3])
            sr += a * Int(p[0])
            sg += a * Int(p[1])
            sb += a * Int(p[2])
            sa += a
        }
        if sa == 0 {
            for i in 0..<4 {
                let p = (i < 2 ? top : bottom) + (i & 1) * 4
                sr += Int(p[0])
                sg += Int(p[1])
                sb += Int(p[2])
            }
            sa = 4
        }
        let r = Double(sr) / Double(sa), g = Double(sg) / Double(sa), b = Double(sb) / Double(sa)
        return (
            clamp(128 + (-37.797 * r - 74.203 * g + 112.0 * b) / 255),
            clamp(128 + (112.0 * r - 93.786 * g - 18.214 * b) / 255)
        )
    }

    @inline(__always)
    private static func clamp(_ x: Double) -> UInt8 { UInt8(max(0, min(255, x.rounded()))) }
}

/// Reads one row of a decoded PNG frame in its own pixel format as 8-bit RGBA.
/// 16-bit samples keep their high byte (PNG stores them big-endian).
struct PNGRowReader {
    enum Kind { case rgb24, rgba, rgb48be, rgba64be, gray8, gray16be, ya8, ya16be, pal8, monoblack }
    let kind: Kind
    let width: Int

    init?(format: AVPixelFormat, width: Int) {
        switch format {
        case AV_PIX_FMT_RGB24: kind = .rgb24
        case AV_PIX_FMT_RGBA: kind = .rgba
        case AV_PIX_FMT_RGB48BE: kind = .rgb48be
        case AV_PIX_FMT_RGBA64BE: kind = .rgba64be
        case AV_PIX_FMT_GRAY8: kind = .gray8
        case AV_PIX_FMT_GRAY16BE: kind = .gray16be
        case AV_PIX_FMT_YA8: kind = .ya8
        case AV_PIX_FMT_YA16BE: kind = .ya16be
        case AV_PIX_FMT_PAL8: kind = .pal8
        case AV_PIX_FMT_MONOBLACK: kind = .monoblack
        default: return nil
        }
        self.width = width
    }

    var needsPalette: Bool { kind == .pal8 }

    /// Bytes of one source row, checked against the frame's line size before any read.
    var rowBytes: Int {
        switch kind {
        case .rgb24: width * 3
        case .rgba: width * 4
        case .rgb48be: width * 6
        case .rgba64be: width * 8
        case .gray8: width
        case .gray16be, .ya8: width * 2
        case .ya16be: width * 4
        case .pal8: width
        case .monoblack: (width + 7) / 8
        }
    }

    /// Writes `width` RGBA pixels to `out`. `palette` is libavcodec's 256 native-endian 0xAARRGGBB words.
    func read(_ src: UnsafePointer<UInt8>, palette: UnsafePointer<UInt8>?, into out: UnsafeMutablePointer<UInt8>) {
        for x in 0..<width {
            let o = out + x * 4
            switch kind {
            case .rgb24:
                o[0] = src[x * 3]
                o[1] = src[x * 3 + 1]
                o[2] = src[x * 3 + 2]
                o[3] = 255
            case .rgba:
                o[0] = src[x * 4]
                o[1] = src[x * 4 + 1]
                o[2] = src[x * 4 + 2]
                o[3] = src[x * 4 + 3]
            case .rgb48be:
                o[0] = src[x * 6]
                o[1] = src[x * 6 + 2]
                o[2] = src[x * 6 + 4]
                o[3] = 255
            case .rgba64be:
                o[0] = src[x * 8]
                o[1] = src[x * 8 + 2]
                o[2] = src[x * 8 + 4]
                o[3] = src[x * 8 + 6]
            case .gray8:
                o[0] = src[x]
                o[1] = src[x]
                o[2] = src[x]
                o[3] = 255
            case .gray16be:
                o[0] = src[x * 2]
                o[1] = src[x * 2]
                o[2] = src[x * 2]
                o[3] = 255
            case .ya8:
                o[0] = src[x * 2]
                o[1] = src[x * 2]
                o[2] = src[x * 2]
                o[3] = src[x * 2 + 1]
            case .ya16be:
                o[0] = src[x * 4]
                o[1] = src[x * 4]
                o[2] = src[x * 4]
                o[3] = src[x * 4 + 2]
            case .pal8:
                let entry = Int(src[x]) * 4
                // Native-endian words, as libavcodec stored them.
                let word = palette.map { UnsafeRawPointer($0 + entry).loadUnaligned(as: UInt32.self) } ?? 0
                o[0] = UInt8(truncatingIfNeeded: word >> 16)
                o[1] = UInt8(truncatingIfNeeded: word >> 8)
                o[2] = UInt8(truncatingIfNeeded: word)
                o[3] = UInt8(truncatingIfNeeded: word >> 24)
            case .monoblack:
                let bit = (src[x / 8] >> (7 - UInt8(x % 8))) & 1
                let g: UInt8 = bit == 1 ? 255 : 0
                o[0] = g
                o[1] = g
                o[2] = g
                o[3] = 255
            }
        }
    }
}
