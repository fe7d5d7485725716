import CAVCodec
import Media

/// A libavcodec video decoder (H.264 or VP8) writing 8-bit 4:2:0 pictures into the caller's reused
/// `VideoFrame`: the shared body of `H264Decoder` and `VP8Decoder`.
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
    /// Reused input buffer with libavcodec's required zeroed padding; grows to the largest access unit seen.
    private var input: UnsafeMutablePointer<UInt8>
    private var inputCapacity = 0

    init(codec id: AVCodecID, name: String, maxWidth: Int, maxHeight: Int) throws(CodecError) {
        _ = AVError.quietLogs
        self.name = name
        self.maxWidth = maxWidth
        self.maxHeight = maxHeight
        input = .allocate(capacity: 1)
        guard let codec = avcodec_find_decoder(id) else { throw AVError.error("\(name) decoder not found") }
        guard let ctx = avcodec_alloc_context3(codec) else { throw AVError.error("avcodec_alloc_context3 failed") }
        context = ctx
        ctx.pointee.thread_count = 1            // no frame threading: it would add frames of delay
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
        av_frame_free(&frame)
        av_packet_free(&packet)
        input.deallocate()
    }

    /// Decodes one compressed frame into `output` (resized when the stream size changes, planes copied row by
    /// row honouring libavcodec's line sizes). Returns false when libavcodec produced no picture yet.
    func decode(_ data: [UInt8], into output: inout VideoFrame) throws(CodecError) -> Bool {
        guard let context, let frame, let packet else { return false }
        guard !data.isEmpty else { throw AVError.error("empty \(name) frame") }
        guard data.count <= Self.maxAccessUnitBytes else { throw AVError.error("\(name) frame of \(data.count) bytes too large") }
        let padding = Int(AV_INPUT_BUFFER_PADDING_SIZE)
        if inputCapacity < data.count {
            input.deallocate()
            inputCapacity = data.count
            input = .allocate(capacity: inputCapacity + padding)
        }
        data.withUnsafeBufferPointer { src in
            if let base = src.baseAddress { input.update(from: base, count: src.count) }
        }
        (input + data.count).initialize(repeating: 0, count: padding)
        packet.pointee.data = input             // not reference-counted: libavcodec copies what it keeps
        packet.pointee.size = Int32(data.count)
        defer { av_packet_unref(packet) }
        var status = avcodec_send_packet(context, packet)
        guard status >= 0 else { throw AVError.error(status, "avcodec_send_packet") }
        var produced = false
        while true {
            status = avcodec_receive_frame(context, frame)
            if status == AVError.again || status == AVError.endOfFile { return produced }
            guard status >= 0 else { throw AVError.error(status, "avcodec_receive_frame") }
            defer { av_frame_unref(frame) }
            try copy(frame.pointee, into: &output)
            produced = true
        }
    }

    private func copy(_ f: AVFrame, into output: inout VideoFrame) throws(CodecError) {
        let format = AVPixelFormat(rawValue: f.format)
        guard format == AV_PIX_FMT_YUV420P || format == AV_PIX_FMT_YUVJ420P else {
            throw AVError.error("unsupported \(name) pixel format \(f.format) (only 8-bit 4:2:0)")
        }
        let w = Int(f.width), h = Int(f.height)
        guard w > 0, h > 0, w <= maxWidth, h <= maxHeight else {
            throw AVError.error("picture \(w)x\(h) outside 1x1...\(maxWidth)x\(maxHeight)")
        }
        guard let py = f.data.0, let pu = f.data.1, let pv = f.data.2,
              f.linesize.0 >= w, f.linesize.1 >= (w + 1) / 2, f.linesize.2 >= (w + 1) / 2 else {
            throw AVError.error("decoded picture has unexpected planes")
        }
        output.resize(width: w, height: h)
        let cw = (w + 1) / 2, ch = (h + 1) / 2
        Self.copyPlane(py, stride: Int(f.linesize.0), width: w, height: h, into: &output.y)
        Self.copyPlane(pu, stride: Int(f.linesize.1), width: cw, height: ch, into: &output.u)
        Self.copyPlane(pv, stride: Int(f.linesize.2), width: cw, height: ch, into: &output.v)
    }

    private static func copyPlane(_ src: UnsafeMutablePointer<UInt8>, stride: Int, width: Int, height: Int,
                                  into dst: inout [UInt8]) {
        dst.withUnsafeMutableBufferPointer { d in
            guard let base = d.baseAddress, d.count >= width * height else { return }
            for row in 0..<height {
                (base + row * width).update(from: src + row * stride, count: width)
            }
        }
    }
}
