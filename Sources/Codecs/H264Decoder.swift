import CAVCodec
import Media

/// An H.264 decoder (libavcodec) for one inbound video stream.
///
/// Input is one access unit in Annex-B form (start-code separated NAL units, SPS/PPS in band), which is
/// what an RFC 6184 depacketizer produces. Output is copied into the caller's reused `VideoFrame`.
///
/// `@unchecked Sendable`: the codec context is not thread-safe; an instance is confined to one thread or
/// serial queue at a time (its stream's ingest queue).
public final class H264Decoder: @unchecked Sendable {
    /// Largest picture accepted, and the largest access unit (bytes) fed to libavcodec.
    public let maxWidth: Int
    public let maxHeight: Int
    public static let maxAccessUnitBytes = 4 << 20

    private var context: UnsafeMutablePointer<AVCodecContext>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    /// Reused input buffer with libavcodec's required zeroed padding; grows to the largest access unit seen.
    private var input: UnsafeMutablePointer<UInt8>
    private var inputCapacity = 0

    public init(maxWidth: Int = 4096, maxHeight: Int = 4096) throws(CodecError) {
        _ = AVError.quietLogs
        self.maxWidth = maxWidth
        self.maxHeight = maxHeight
        input = .allocate(capacity: 1)
        guard let codec = avcodec_find_decoder(AV_CODEC_ID_H264) else { throw AVError.error("h264 decoder not found") }
        guard let ctx = avcodec_alloc_context3(codec) else { throw AVError.error("avcodec_alloc_context3 failed") }
        context = ctx
        ctx.pointee.thread_count = 1            // no frame threading: it would add frames of delay
        ctx.pointee.flags |= AV_CODEC_FLAG_LOW_DELAY
        let status = avcodec_open2(ctx, codec, nil)
        guard status >= 0 else { throw AVError.error(status, "avcodec_open2(h264)") }
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

    /// Decodes one Annex-B access unit into `frame` (resized when the stream size changes, planes copied row by
    /// row honouring libavcodec's line sizes). Returns false when libavcodec produced no picture yet.
    public func decode(_ annexB: [UInt8], into output: inout VideoFrame) throws(CodecError) -> Bool {
        guard let context, let frame, let packet else { return false }
        guard !annexB.isEmpty else { throw AVError.error("empty H.264 access unit") }
        guard annexB.count <= Self.maxAccessUnitBytes else { throw AVError.error("H.264 access unit of \(annexB.count) bytes too large") }
        let padding = Int(AV_INPUT_BUFFER_PADDING_SIZE)
        if inputCapacity < annexB.count {
            input.deallocate()
            inputCapacity = annexB.count
            input = .allocate(capacity: inputCapacity + padding)
        }
        annexB.withUnsafeBufferPointer { src in
            if let base = src.baseAddress { input.update(from: base, count: src.count) }
        }
        (input + annexB.count).initialize(repeating: 0, count: padding)
        packet.pointee.data = input             // not reference-counted: libavcodec copies what it keeps
        packet.pointee.size = Int32(annexB.count)
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
            throw AVError.error("unsupported H.264 pixel format \(f.format) (only 8-bit 4:2:0)")
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
