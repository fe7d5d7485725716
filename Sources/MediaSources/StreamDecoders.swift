import CAVFormat
import Media

/// libavcodec opened from one stream of a `MediaInput` (its codec parameters, extradata included: H.264 and AAC
/// in MP4 and FLV come without in-band headers). Confined to the source's reading thread.
final class CodecContext {
    let context: UnsafeMutablePointer<AVCodecContext>
    let frame: UnsafeMutablePointer<AVFrame>
    let codecName: String

    init(_ parameters: UnsafePointer<AVCodecParameters>, maxPixels: Int64? = nil) throws(MediaInputError) {
        codecName = String(cString: avcodec_get_name(parameters.pointee.codec_id))
        guard let codec = avcodec_find_decoder(parameters.pointee.codec_id) else {
            throw MediaInputError("no decoder for \(codecName)")
        }
        guard let made = avcodec_alloc_context3(codec) else { throw MediaInputError("out of memory") }
        var context: UnsafeMutablePointer<AVCodecContext>? = made
        var status = avcodec_parameters_to_context(made, parameters)
        if status >= 0 {
            made.pointee.thread_count = 1
            made.pointee.flags |= AV_CODEC_FLAG_LOW_DELAY
            if let maxPixels { made.pointee.max_pixels = maxPixels }
            status = avcodec_open2(made, codec, nil)
        }
        guard status >= 0, let frame = av_frame_alloc() else {
            avcodec_free_context(&context)
            throw MediaInputError(status, "cannot open the \(codecName) decoder")
        }
        self.context = made
        self.frame = frame
    }

    deinit {
        var context: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&context)
        var frame: UnsafeMutablePointer<AVFrame>? = frame
        av_frame_free(&frame)
    }

    /// Feeds one packet (nil: the end, flushing what the decoder holds) and hands every frame it gives to `body`.
    func decode(
        _ packet: UnsafeMutablePointer<AVPacket>?,
        _ body: (UnsafeMutablePointer<AVFrame>) throws(MediaInputError) -> Void
    ) throws(MediaInputError) {
        let sent = avcodec_send_packet(context, packet)
        // A full decoder (EAGAIN) cannot happen with one receive loop per packet; other errors are a bad packet.
        guard sent >= 0 || sent == cohost_averror_again() else {
            throw MediaInputError(sent, "cannot decode \(codecName)")
        }
        while true {
            let status = avcodec_receive_frame(context, frame)
            if status == cohost_averror_again() || status == cohost_avformat_eof() { return }
            guard status >= 0 else { throw MediaInputError(status, "cannot decode \(codecName)") }
            defer { av_frame_unref(frame) }
            try body(frame)
        }
    }

    /// Forgets what the decoder holds (after a seek).
    func flush() { avcodec_flush_buffers(context) }
}

/// Any audio libavcodec decodes (AAC, G.711, Opus, MP3, PCM…), resampled with libswresample to the mix's
/// 48 kHz interleaved float at `channels` channels.
final class AudioStreamDecoder {
    private let codec: CodecContext
    let channels: Int
    private var resampler: OpaquePointer?
    private var input: (format: Int32, rate: Int32, channels: Int32) = (-1, 0, 0)
    /// Reused output of one frame (grows to the largest frame seen).
    private(set) var samples: [Float] = []

    init(_ parameters: UnsafePointer<AVCodecParameters>, channels: Int) throws(MediaInputError) {
        codec = try CodecContext(parameters)
        self.channels = channels
    }

    deinit { swr_free(&resampler) }

    var codecName: String { codec.codecName }

    /// Decodes `packet` and hands each frame's resampled audio (`frames` of `samples`) and its start time in
    /// seconds (the frame's timestamp, nil when the container gave none) to `body`.
    func decode(
        _ packet: UnsafeMutablePointer<AVPacket>?, timeBase: Double, _ body: (Int, Double?) -> Void
    ) throws(MediaInputError) {
        try codec.decode(packet) { (frame) throws(MediaInputError) in
            let f = frame.pointee
            guard f.sample_rate > 0, f.nb_samples > 0 else { return }
            let shape = (f.format, f.sample_rate, f.ch_layout.nb_channels)
            if shape != input || resampler == nil {
                let status = cohost_swr_setup(&resampler, frame, Int32(AudioFormat.sampleRate), Int32(channels))
                guard status >= 0 else { throw MediaInputError(status, "cannot resample \(codec.codecName)") }
                input = shape
            }
            // What libswresample may give for this frame: its samples at the new rate plus what it holds back.
            let capacity = Int(f.nb_samples) * AudioFormat.sampleRate / Int(f.sample_rate) + 256
            if samples.count < capacity * channels { samples = [Float](repeating: 0, count: capacity * channels) }
            let written = samples.withUnsafeMutableBufferPointer { buffer in
                cohost_swr_convert_frame(resampler, buffer.baseAddress, Int32(capacity), frame)
            }
            guard written >= 0 else { throw MediaInputError(written, "cannot resample \(codec.codecName)") }
            let pts =
                f.best_effort_timestamp == cohost_av_nopts_value() ? nil : Double(f.best_effort_timestamp) * timeBase
            if written > 0 { body(Int(written), pts) }
        }
    }

    func flush() { codec.flush() }
}

/// Any video libavcodec decodes (H.264, H.265, MJPEG, VP8…), converted with libswscale to I420 at its own size, or
/// scaled down to fit `maxWidth`×`maxHeight`.
final class VideoStreamDecoder {
    private let codec: CodecContext
    private let maxWidth: Int
    private let maxHeight: Int
    private var scaler: OpaquePointer?

    init(_ parameters: UnsafePointer<AVCodecParameters>, maxWidth: Int, maxHeight: Int) throws(MediaInputError) {
        // Refused while parsing headers, before libavcodec allocates a huge picture (4× the room's largest: a
        // larger source is scaled down here).
        codec = try CodecContext(parameters, maxPixels: Int64(maxWidth) * Int64(maxHeight) * 4)
        self.maxWidth = maxWidth
        self.maxHeight = maxHeight
    }

    deinit { cohost_sws_free(scaler) }

    var codecName: String { codec.codecName }

    /// Decodes `packet` and hands each picture, converted into a picture `take` supplies for its size, and its time
    /// in seconds, to `body`.
    func decode(
        _ packet: UnsafeMutablePointer<AVPacket>?, timeBase: Double,
        take: (Int, Int) -> SourcePicture, _ body: (SourcePicture, Double?) -> Void
    ) throws(MediaInputError) {
        try codec.decode(packet) { (frame) throws(MediaInputError) in
            let f = frame.pointee
            guard f.width > 0, f.height > 0 else { return }
            let (width, height) = Self.fit(width: Int(f.width), height: Int(f.height), maxWidth, maxHeight)
            let picture = take(width, height)
            let status = picture.withPlaneBuffers { y, u, v in
                cohost_sws_to_i420(
                    &scaler, frame, y, Int32(width), u, Int32((width + 1) / 2), v, Int32((width + 1) / 2),
                    Int32(width), Int32(height))
            }
            guard status >= 0 else { throw MediaInputError(status, "cannot convert a \(codec.codecName) picture") }
            let pts =
                f.best_effort_timestamp == cohost_av_nopts_value() ? nil : Double(f.best_effort_timestamp) * timeBase
            body(picture, pts)
        }
    }

    func flush() { codec.flush() }

    /// The size a `width`×`height` picture is shown at: its own, or scaled down (aspect kept, even sides) to fit.
    static func fit(width: Int, height: Int, _ maxWidth: Int, _ maxHeight: Int) -> (Int, Int) {
        guard width > maxWidth || height > maxHeight else { return (width, height) }
        let scale = min(Double(maxWidth) / Double(width), Double(maxHeight) / Double(height))
        let w = max(2, Int(Double(width) * scale) & ~1)
        let h = max(2, Int(Double(height) * scale) & ~1)
        return (w, h)
    }
}
