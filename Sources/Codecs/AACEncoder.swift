import CAVCodec
import Media

/// An AAC-LC encoder (libavcodec's native `aac`) at 48 kHz for the programme audio.
///
/// Input is the internal format (interleaved stereo Float32, any number of frames, normally 960);
/// libavcodec wants planar 1024-sample frames, so samples are gathered straight into one reused `AVFrame`
/// and each full frame is sent. Output timestamps are in samples and start at 0: libavcodec reports
/// its 1024-sample priming as pts −1024, which is shifted away here.
///
/// `@unchecked Sendable`: the codec context is not thread-safe; an instance is confined to one thread or
/// serial queue at a time (the room's audio tick).
public final class AACEncoder: @unchecked Sendable {
    public let channels: Int
    public let bitrate: Int
    /// AudioSpecificConfig (ISO 14496-3 §1.6.2.1) from the encoder's extradata: FLV's AAC sequence header.
    public let audioSpecificConfig: [UInt8]
    /// Samples per channel per AAC frame (1024 for AAC-LC).
    public let frameSize: Int
    /// Samples of encoder delay at the start of the output (libavcodec's `initial_padding`): the
    /// first input sample comes out of a decoder this late. FLV cannot say so, so the muxing side
    /// delays video by as much to keep them in sync.
    public var primingSamples: Int { Int(ptsShift) }

    private var context: UnsafeMutablePointer<AVCodecContext>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    /// Samples already gathered in `frame`, per channel.
    private var filled = 0
    /// Samples sent so far: the pts of the frame being gathered.
    private var nextPTS: Int64 = 0
    /// Added to libavcodec's pts so the first packet has pts 0.
    private let ptsShift: Int64
    private var flushed = false

    /// `channels` is 1 or 2; with 1 the stereo input is downmixed ((L+R)/2) before encoding. `startSample` is the
    /// time of the first sample given, in samples: its packet then comes out with that pts (an encoder started
    /// mid-stream continues the timeline of the one before it).
    public init(channels: Int, bitrate: Int, startSample: Int64 = 0) throws(CodecError) {
        _ = AVError.quietLogs
        guard channels == 1 || channels == 2 else {
            throw AVError.error("AAC channels must be 1 or 2, not \(channels)")
        }
        guard (8_000...512_000).contains(bitrate) else { throw AVError.error("AAC bitrate \(bitrate) out of range") }
        self.channels = channels
        self.bitrate = bitrate
        guard let codec = avcodec_find_encoder_by_name("aac") else {
            throw AVError.error("native aac encoder not found")
        }
        guard let ctx = avcodec_alloc_context3(codec) else { throw AVError.error("avcodec_alloc_context3 failed") }
        context = ctx
        ctx.pointee.sample_fmt = AV_SAMPLE_FMT_FLTP
        ctx.pointee.sample_rate = Int32(AudioFormat.sampleRate)
        av_channel_layout_default(&ctx.pointee.ch_layout, Int32(channels))
        ctx.pointee.bit_rate = Int64(bitrate)
        ctx.pointee.profile = FF_PROFILE_AAC_LOW
        ctx.pointee.time_base = AVRational(num: 1, den: Int32(AudioFormat.sampleRate))
        ctx.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER  // AudioSpecificConfig in extradata, not ADTS
        // Until every stored property is set, a throw does not run deinit: free by hand.
        var status = avcodec_open2(ctx, codec, nil)
        guard status >= 0 else {
            Self.free(ctx, nil, nil)
            throw AVError.error(status, "avcodec_open2(aac)")
        }
        guard let extradata = ctx.pointee.extradata, ctx.pointee.extradata_size >= 2 else {
            Self.free(ctx, nil, nil)
            throw AVError.error("aac encoder produced no AudioSpecificConfig")
        }
        audioSpecificConfig = Array(UnsafeBufferPointer(start: extradata, count: Int(ctx.pointee.extradata_size)))
        frameSize = Int(ctx.pointee.frame_size)
        ptsShift = Int64(ctx.pointee.initial_padding)
        nextPTS = startSample

        // Every stored property is set from here on, so a throw runs deinit, which frees all three handles.
        self.frame = av_frame_alloc()
        self.packet = av_packet_alloc()
        guard let frame, packet != nil else { throw AVError.error("av_frame_alloc/av_packet_alloc failed") }
        frame.pointee.format = AV_SAMPLE_FMT_FLTP.rawValue
        frame.pointee.nb_samples = Int32(frameSize)
        frame.pointee.sample_rate = ctx.pointee.sample_rate
        status = av_channel_layout_copy(&frame.pointee.ch_layout, &ctx.pointee.ch_layout)
        if status >= 0 { status = cohost_audio_frame_single_buffer(frame) }
        guard status >= 0 else { throw AVError.error(status, "allocating the AAC input frame") }
        guard frameSize > 0 else { throw AVError.error("aac encoder reports no frame size") }
    }

    deinit { Self.free(context, frame, packet) }

    private static func free(
        _ ctx: UnsafeMutablePointer<AVCodecContext>?, _ frame: UnsafeMutablePointer<AVFrame>?,
        _ packet: UnsafeMutablePointer<AVPacket>?
    ) {
        var ctx = ctx, frame = frame, packet = packet
        avcodec_free_context(&ctx)
        av_frame_free(&frame)
        av_packet_free(&packet)
    }

    /// Feeds interleaved stereo frames (normally 960); returns the AAC frames completed, in order.
    /// An odd trailing sample (half a stereo frame) is ignored.
    public func encode(_ interleavedStereo: [Float]) throws(CodecError) -> [EncodedAudio] {
        var out: [EncodedAudio] = []
        try encode(interleavedStereo) { data, pts in out.append(EncodedAudio(data: Array(data), pts: pts)) }
        return out
    }

    /// Like `encode(_:)`, but hands each completed frame to `each` straight from libavcodec's packet (the bytes
    /// are valid only during the call) instead of copying it into an array: the programme's per-block path
    /// (hot path: no allocation in Swift; libavcodec 5.1 itself still allocates per frame, see `send`).
    public func encode(
        _ interleavedStereo: [Float], each: (_ data: UnsafeRawBufferPointer, _ pts: Int64) -> Void
    ) throws(CodecError) {
        guard !flushed else { throw AVError.error("encode after flush") }
        guard let frame else { return }
        let total = interleavedStereo.count / 2
        var consumed = 0
        while consumed < total {
            if filled == 0 {
                // The encoder may still reference the previous buffer; this reallocates only then.
                let status = cohost_audio_frame_make_writable(frame)
                guard status >= 0 else { throw AVError.error(status, "making the AAC input frame writable") }
            }
            let n = min(frameSize - filled, total - consumed)
            copy(interleavedStereo, from: consumed, count: n, into: frame)
            filled += n
            consumed += n
            if filled == frameSize {
                try send(frame, each)
            }
        }
    }

    /// Encodes what is still gathered (a short last frame) and drains the encoder. The encoder is finished afterwards.
    public func flush() throws(CodecError) -> [EncodedAudio] {
        guard !flushed else { return [] }
        flushed = true
        var out: [EncodedAudio] = []
        let collect = { (data: UnsafeRawBufferPointer, pts: Int64) in
            out.append(EncodedAudio(data: Array(data), pts: pts))
        }
        if filled > 0, let frame {
            frame.pointee.nb_samples = Int32(filled)  // the aac encoder accepts a small last frame
            try send(frame, collect)
        }
        try send(nil, collect)
        return out
    }

    /// De-interleaves `count` stereo frames starting at frame `start` into the frame's planes at `filled`.
    private func copy(_ input: [Float], from start: Int, count: Int, into frame: UnsafeMutablePointer<AVFrame>) {
        guard let left = frame.pointee.data.0 else { return }
        let l = UnsafeMutableRawPointer(left).assumingMemoryBound(to: Float.self) + filled
        input.withUnsafeBufferPointer { src in
            if channels == 2, let right = frame.pointee.data.1 {
                let r = UnsafeMutableRawPointer(right).assumingMemoryBound(to: Float.self) + filled
                for i in 0..<count {
                    l[i] = src[2 * (start + i)]
                    r[i] = src[2 * (start + i) + 1]
                }
            } else {
                for i in 0..<count { l[i] = (src[2 * (start + i)] + src[2 * (start + i) + 1]) * 0.5 }
            }
        }
    }

    /// Sends one frame (nil: drain) and hands every packet out. libavcodec 5.1 allocates here 4 times per frame
    /// whatever the caller does: `av_frame_ref` of the input (one `AVBufferRef`; one per channel plane if the
    /// planes were not in one buffer) and, because the native AAC encoder writes into its internal byte buffer,
    /// a refcounted copy of each packet (data, `AVBuffer`, `AVBufferRef`) from `get_encode_buffer`, which an
    /// encoder without `AV_CODEC_CAP_DR1` must leave at libavcodec's default (avcodec.h).
    private func send(
        _ frame: UnsafeMutablePointer<AVFrame>?,
        _ each: (_ data: UnsafeRawBufferPointer, _ pts: Int64) -> Void
    ) throws(CodecError) {
        guard let context, let packet else { return }
        if let frame {
            frame.pointee.pts = nextPTS
            nextPTS += Int64(frame.pointee.nb_samples)
            filled = 0
        }
        var status = avcodec_send_frame(context, frame)
        guard status >= 0 else { throw AVError.error(status, "avcodec_send_frame") }
        while true {
            status = avcodec_receive_packet(context, packet)
            if status == AVError.again || status == AVError.endOfFile { return }
            guard status >= 0 else { throw AVError.error(status, "avcodec_receive_packet") }
            defer { av_packet_unref(packet) }
            guard let data = packet.pointee.data, packet.pointee.size > 0 else { continue }
            each(
                UnsafeRawBufferPointer(start: data, count: Int(packet.pointee.size)),
                max(0, packet.pointee.pts + ptsShift))
        }
    }
}
