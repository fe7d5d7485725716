import CAVCodec
import Media

/// Encodes pictures as PNG (8-bit RGB, no alpha) with libavcodec's `png` encoder, for canvas snapshots.
///
/// One encoder serves one size; each `encode` call is a complete PNG file. Not a hot path: it runs
/// per snapshot request, so the one-shot `encode(_:)` that makes an encoder per call is fine.
///
/// `@unchecked Sendable`: the codec context is not thread-safe; an instance is confined to one thread
/// at a time (the request that made it).
public final class PNGEncoder: @unchecked Sendable {
    public let width: Int
    public let height: Int
    /// Larger sides are refused, which bounds what one call allocates (16384² RGB is 768 MiB).
    public static let maxSide = 16_384

    private var context: UnsafeMutablePointer<AVCodecContext>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private var nextPTS: Int64 = 0

    /// `compressionLevel` is zlib's 0 (none, fastest) … 9 (smallest, slowest).
    public init(width: Int, height: Int, compressionLevel: Int = 3) throws(CodecError) {
        _ = AVError.quietLogs
        guard (1...Self.maxSide).contains(width), (1...Self.maxSide).contains(height) else {
            throw AVError.error("PNG size \(width)x\(height) outside 1...\(Self.maxSide)")
        }
        guard (0...9).contains(compressionLevel) else {
            throw AVError.error("PNG compression level \(compressionLevel) outside 0...9")
        }
        self.width = width
        self.height = height
        guard let codec = avcodec_find_encoder(AV_CODEC_ID_PNG) else { throw AVError.error("png encoder not found") }
        // All stored properties are set from here on: a throw runs deinit, which frees what was allocated.
        context = avcodec_alloc_context3(codec)
        frame = av_frame_alloc()
        packet = av_packet_alloc()
        guard let ctx = context, let frame, packet != nil else {
            throw AVError.error("avcodec/av_frame/av_packet alloc failed")
        }
        ctx.pointee.width = Int32(width)
        ctx.pointee.height = Int32(height)
        ctx.pointee.pix_fmt = AV_PIX_FMT_RGB24
        ctx.pointee.time_base = AVRational(num: 1, den: 1)
        ctx.pointee.compression_level = Int32(compressionLevel)
        var status = avcodec_open2(ctx, codec, nil)
        guard status >= 0 else { throw AVError.error(status, "avcodec_open2(png)") }
        frame.pointee.format = AV_PIX_FMT_RGB24.rawValue
        frame.pointee.width = Int32(width)
        frame.pointee.height = Int32(height)
        status = av_frame_get_buffer(frame, 0)
        guard status >= 0 else { throw AVError.error(status, "av_frame_get_buffer") }
    }

    deinit {
        avcodec_free_context(&context)
        av_frame_free(&frame)
        av_packet_free(&packet)
    }

    /// One PNG file from packed RGB24 (R, G, B per pixel, rows top to bottom, no padding):
    /// exactly `width · height · 3` bytes.
    public func encode(rgb: [UInt8]) throws(CodecError) -> [UInt8] {
        guard rgb.count == width * height * 3 else {
            throw AVError.error("PNG input is \(rgb.count) bytes; \(width)x\(height) RGB24 needs \(width * height * 3)")
        }
        guard let context, let frame, let packet else { throw AVError.error("PNG encoder not initialised") }
        // The encoder may still hold the previous call's buffer; this copies only then.
        var status = av_frame_make_writable(frame)
        guard status >= 0 else { throw AVError.error(status, "av_frame_make_writable") }
        guard let plane = frame.pointee.data.0 else { throw AVError.error("PNG frame has no plane") }
        let lineSize = Int(frame.pointee.linesize.0)
        let rowBytes = width * 3
        rgb.withUnsafeBufferPointer { src in
            guard let base = src.baseAddress else { return }
            // av_frame_get_buffer pads rows to its alignment: copy row by row.
            for row in 0..<height {
                (plane + row * lineSize).update(from: base + row * rowBytes, count: rowBytes)
            }
        }
        frame.pointee.pts = nextPTS
        nextPTS += 1
        status = avcodec_send_frame(context, frame)
        guard status >= 0 else { throw AVError.error(status, "avcodec_send_frame(png)") }
        status = avcodec_receive_packet(context, packet)
        guard status >= 0 else { throw AVError.error(status, "avcodec_receive_packet(png)") }
        defer { av_packet_unref(packet) }
        guard let data = packet.pointee.data, packet.pointee.size > 0 else {
            throw AVError.error("png encoder produced an empty packet")
        }
        return Array(UnsafeBufferPointer(start: data, count: Int(packet.pointee.size)))
    }

    /// One PNG file of an I420 picture (converted with BT.601 limited range, as `ImageOps.rgb`).
    public func encode(_ picture: VideoFrame) throws(CodecError) -> [UInt8] {
        guard picture.width == width, picture.height == height else {
            throw AVError.error("picture is \(picture.width)x\(picture.height); this PNG encoder is \(width)x\(height)")
        }
        return try encode(rgb: ImageOps.rgb(picture))
    }

    /// One PNG file of `picture`, with an encoder made for it.
    public static func encode(_ picture: VideoFrame) throws(CodecError) -> [UInt8] {
        try PNGEncoder(width: picture.width, height: picture.height).encode(picture)
    }
}
