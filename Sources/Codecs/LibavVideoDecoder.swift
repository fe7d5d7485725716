import CAVCodec
import Media

/// A libavcodec video decoder (H.264 or VP8) for 8-bit 4:2:0 pictures, left in its pooled buffers for a
/// `DecodedPicture` to hold or copied into the caller's reused `VideoFrame`: the shared body of `H264Decoder`
/// and `VP8Decoder`.
///
/// `@unchecked Sendable`: the codec context is not thread-safe; an instance is confined to one thread or
/// serial queue at a time (its stream's ingest queue).
final class LibavVideoDecoder: @unchecked Sendable {
    /// Largest picture accepted, and the largest compressed frame (bytes) fed to libavcodec.
    let maxWidth: Int
    let maxHeight: Int
    static let maxAccessUnitBytes = 4 << 20
    /// For error messages: "H.264", "VP8".
    private let name: String

    private var context: UnsafeMutablePointer<AVCodecContext>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    /// One buffer per decoded picture (picture_pool.h), owned here, freed after the context.
    private var pool: UnsafeMutablePointer<CohostPicturePool>?
    /// The compressed input, reference-counted so libavcodec takes a reference instead of copying it (three
    /// allocations per frame fewer); reused once libavcodec has let go of it, which it does as soon as the
    /// frame is decoded. Holds libavcodec's required zeroed padding; grows to the largest access unit seen.
    private var input: UnsafeMutablePointer<AVBufferRef>?
    private var inputBuffersAllocated = 0
    /// Interlaced pictures copied out of the decoder's buffer (see `decode(_:into:)` for a `DecodedPicture`).
    private var detachedPictures = 0

    /// `pooledPictures` false keeps libavcodec's own buffers (tests compare the two).
    init(
        codec id: AVCodecID, name: String, maxWidth: Int, maxHeight: Int, pooledPictures: Bool = true
    ) throws(CodecError) {
        _ = AVError.quietLogs
        self.name = name
        self.maxWidth = maxWidth
        self.maxHeight = maxHeight
        guard let codec = avcodec_find_decoder(id) else { throw AVError.error("\(name) decoder not found") }
        guard let ctx = avcodec_alloc_context3(codec) else { throw AVError.error("avcodec_alloc_context3 failed") }
        context = ctx
        if pooledPictures {
            guard let pool = cohost_picture_pool_install(ctx) else {
                throw AVError.error("out of memory for the picture pool")
            }
            self.pool = pool
        }
        ctx.pointee.thread_count = 1  // no frame threading: it would add frames of delay
        ctx.pointee.flags |= AV_CODEC_FLAG_LOW_DELAY
        // Refused while parsing the header, before libavcodec allocates frames for it: a hostile 16383×16383
        // VP8 keyframe of ten bytes must not cost hundreds of megabytes.
        ctx.pointee.max_pixels = Int64(maxWidth) * Int64(maxHeight)
        let status = avcodec_open2(ctx, codec, nil)
        guard status >= 0 else { throw AVError.error(status, "avcodec_open2(\(name))") }
        guard let frame = av_frame_alloc(), let packet = av_packet_alloc() else {
            throw AVError.error("av_frame_alloc/av_packet_alloc failed")
        }
        self.frame = frame
        self.packet = packet
    }

    deinit {
        avcodec_free_context(&context)
        cohost_picture_pool_free(pool)
        av_frame_free(&frame)
        av_packet_free(&packet)
        av_buffer_unref(&input)
    }

    /// Pictures the decoder took from the pool, pool layouts built (one per picture size) and input buffers
    /// allocated: for tests.
    var bufferCounts: DecoderBufferCounts {
        DecoderBufferCounts(
            pictures: Int(pool?.pointee.pictures ?? 0), layouts: Int(pool?.pointee.layouts ?? 0),
            inputs: inputBuffersAllocated, detached: detachedPictures)
    }

    /// Decodes one compressed frame into `output` (resized when the stream size changes, planes copied row by
    /// row honouring libavcodec's line sizes). Returns false when libavcodec produced no picture yet.
    func decode(_ data: [UInt8], into output: inout VideoFrame) throws(CodecError) -> Bool {
        guard let frame else { return false }
        try send(data)
        var produced = false
        while try receive(into: frame) {
            defer { av_frame_unref(frame) }
            output.copy(from: try planes(of: frame.pointee))
            produced = true
        }
        return produced
    }

    /// Decodes one compressed frame and leaves the picture in the decoder's buffer, referenced by `picture`
    /// (no copy). `picture` must not be held by anyone else: its old picture is released. Returns false when
    /// libavcodec produced no picture (then `picture` is unchanged).
    func decode(_ data: [UInt8], into picture: DecodedPicture) throws(CodecError) -> Bool {
        guard let frame else { return false }
        try send(data)
        var produced = false
        while try receive(into: frame) {
            av_frame_unref(picture.frame)
            av_frame_move_ref(picture.frame, frame)  // moves the buffer reference: nothing allocated
            do {
                picture.adopt(try planes(of: picture.frame.pointee))
            } catch {
                picture.clear()
                throw error
            }
            if picture.frame.pointee.interlaced_frame != 0 {
                // libavcodec's H.264 decoder may still write into a field picture it has output (a lone first
                // field, then its second): the held copy gets a buffer of its own (allocated; interlaced only).
                let status = av_frame_make_writable(picture.frame)
                guard status >= 0 else {
                    picture.clear()
                    throw AVError.error(status, "av_frame_make_writable(\(name) interlaced picture)")
                }
                detachedPictures += 1
            }
            produced = true
        }
        return produced
    }

    private func send(_ data: [UInt8]) throws(CodecError) {
        guard let context, let packet else { throw AVError.error("\(name) decoder not open") }
        guard !data.isEmpty else { throw AVError.error("empty \(name) frame") }
        guard data.count <= Self.maxAccessUnitBytes else {
            throw AVError.error("\(name) frame of \(data.count) bytes too large")
        }
        let padding = Int(AV_INPUT_BUFFER_PADDING_SIZE)
        let needed = data.count + padding
        // Reusable once libavcodec has let go of it, which it does when the frame is decoded.
        let reusable = input.map { $0.pointee.size >= needed && av_buffer_is_writable($0) != 0 } ?? false
        if !reusable {
            // A bigger frame grows the buffer by half again at least (a stream whose frames creep up in size does
            // not reallocate each time); one libavcodec still holds is replaced at the same size.
            let held = input?.pointee.size ?? 0
            let size = held >= needed ? held : min(max(needed, held * 3 / 2), Self.maxAccessUnitBytes + padding)
            av_buffer_unref(&input)
            input = av_buffer_alloc(size)
            if input != nil { inputBuffersAllocated += 1 }
        }
        guard let input, let bytes = input.pointee.data else {
            throw AVError.error("out of memory for a \(name) frame")
        }
        data.withUnsafeBufferPointer { src in
            if let base = src.baseAddress { bytes.update(from: base, count: src.count) }
        }
        (bytes + data.count).initialize(repeating: 0, count: padding)
        packet.pointee.buf = input
        packet.pointee.data = bytes
        packet.pointee.size = Int32(data.count)
        let status = avcodec_send_packet(context, packet)
        // The packet only lent our reference: clear it rather than unref it.
        packet.pointee.buf = nil
        packet.pointee.data = nil
        packet.pointee.size = 0
        guard status >= 0 else { throw AVError.error(status, "avcodec_send_packet") }
    }

    /// The next decoded picture into `frame`; false when there is none (yet).
    private func receive(into frame: UnsafeMutablePointer<AVFrame>) throws(CodecError) -> Bool {
        guard let context else { return false }
        let status = avcodec_receive_frame(context, frame)
        if status == AVError.again || status == AVError.endOfFile { return false }
        guard status >= 0 else { throw AVError.error(status, "avcodec_receive_frame") }
        return true
    }

    /// The planes of a decoded picture, once it is checked to be one Cohost can draw: 8-bit 4:2:0, within the
    /// size limits, with line sizes at least the plane widths.
    private func planes(of f: AVFrame) throws(CodecError) -> PlanePointers {
        let format = AVPixelFormat(rawValue: f.format)
        guard format == AV_PIX_FMT_YUV420P || format == AV_PIX_FMT_YUVJ420P else {
            throw AVError.error("unsupported \(name) pixel format \(f.format) (only 8-bit 4:2:0)")
        }
        let w = Int(f.width), h = Int(f.height)
        guard w > 0, h > 0, w <= maxWidth, h <= maxHeight else {
            throw AVError.error("picture \(w)x\(h) outside 1x1...\(maxWidth)x\(maxHeight)")
        }
        guard let py = f.data.0, let pu = f.data.1, let pv = f.data.2,
            f.linesize.0 >= w, f.linesize.1 >= (w + 1) / 2, f.linesize.2 >= (w + 1) / 2
        else {
            throw AVError.error("decoded picture has unexpected planes")
        }
        return PlanePointers(
            width: w, height: h, y: py, u: pu, v: pv, strideY: Int(f.linesize.0),
            strideU: Int(f.linesize.1), strideV: Int(f.linesize.2))
    }
}

/// How a libavcodec decoder's buffers were provided so far (tests pin the steady state: one input buffer,
/// one layout per picture size, every picture from the pool).
struct DecoderBufferCounts: Equatable {
    var pictures: Int
    var layouts: Int
    var inputs: Int
    /// Interlaced pictures a `DecodedPicture` holds a copy of instead of the decoder's buffer.
    var detached = 0
}
