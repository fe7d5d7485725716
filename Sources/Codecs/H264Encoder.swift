import CX264
import Media

/// An H.264 encoder (libx264, preset veryfast, tune zerolatency) for the mixed canvas.
///
/// Output is AVCC: NAL units with 4-byte big-endian length prefixes and no in-band SPS/PPS
/// (`b_repeat_headers = 0`); the parameter sets travel once, in `decoderConfigurationRecord`.
/// Rate control is ABR with a VBV of one second at the target bitrate (close to CBR, what RTMP ingest expects).
/// Timestamps are in frames (timebase 1/fps); zerolatency means no frame delay and no B-frames, so dts == pts.
///
/// `@unchecked Sendable`: the x264 handle is not thread-safe; an instance is confined to one thread or
/// serial queue at a time (the room's mix tick). x264's own worker threads are internal to the library.
public final class H264Encoder: @unchecked Sendable {
    public let config: H264EncoderConfig
    /// AVCDecoderConfigurationRecord (ISO 14496-15 §5.2.4.1) built from x264_encoder_headers' SPS and PPS:
    /// what FLV's AVC sequence header carries.
    public let decoderConfigurationRecord: [UInt8]
    /// The sequence and picture parameter sets (NAL units, header byte included): RTP sends them before each IDR.
    public let parameterSets: (sps: [UInt8], pps: [UInt8])

    private let handle: OpaquePointer
    /// Input and output pictures, allocated once and reused for every frame.
    private let pictureIn: UnsafeMutablePointer<x264_picture_t>
    private let pictureOut: UnsafeMutablePointer<x264_picture_t>

    public init(config: H264EncoderConfig) throws(CodecError) {
        try Self.validate(config)
        self.config = config
        let param = UnsafeMutablePointer<x264_param_t>.allocate(capacity: 1)
        defer { param.deallocate() }  // x264_encoder_open copies the parameters
        guard x264_param_default_preset(param, "veryfast", "zerolatency") == 0 else {
            throw Self.error("x264_param_default_preset(veryfast, zerolatency) failed")
        }
        param.pointee.i_csp = X264_CSP_I420
        param.pointee.i_width = Int32(config.width)
        param.pointee.i_height = Int32(config.height)
        param.pointee.i_fps_num = UInt32(config.fps)
        param.pointee.i_fps_den = 1
        param.pointee.i_timebase_num = 1
        param.pointee.i_timebase_den = UInt32(config.fps)
        param.pointee.b_vfr_input = 0  // constant frame rate: rate control from fps, not timestamps
        param.pointee.i_keyint_max = Int32(config.keyintFrames)
        // A fixed GOP: CDN ingests and HLS segmenters cut at keyframes and expect them on the interval.
        // With scene-cut detection a busy canvas produced a keyframe every third frame (seen end to end).
        // Keyframes the programme asks for (a new or reconnected output) still come at once.
        param.pointee.i_scenecut_threshold = 0
        param.pointee.i_keyint_min = Int32(config.keyintFrames)
        param.pointee.i_threads = Int32(config.threads)
        param.pointee.i_log_level = X264_LOG_WARNING
        param.pointee.b_annexb = 0  // 4-byte length prefixes (AVCC), as FLV wants
        param.pointee.b_repeat_headers = 0  // SPS/PPS only via x264_encoder_headers
        Self.setRate(param, kbps: config.bitrateKbps)
        guard x264_param_apply_profile(param, config.profile.rawValue) == 0 else {
            throw Self.error("x264_param_apply_profile(\(config.profile.rawValue)) refused the settings")
        }
        guard let handle = cohost_x264_encoder_open(param) else {
            throw Self.error("x264_encoder_open failed for \(config.width)x\(config.height) @\(config.fps) fps")
        }

        var nals: UnsafeMutablePointer<x264_nal_t>?
        var count: Int32 = 0
        var sps: [UInt8]?, pps: [UInt8]?
        if x264_encoder_headers(handle, &nals, &count) > 0, let nals {
            for nal in UnsafeBufferPointer(start: nals, count: Int(count)) {
                guard nal.i_payload > 4, let payload = nal.p_payload else { continue }
                // Skip the 4-byte length prefix that replaces the start code.
                let body = Array(UnsafeBufferPointer(start: payload + 4, count: Int(nal.i_payload) - 4))
                switch nal.i_type {
                case Int32(NAL_SPS.rawValue): sps = body
                case Int32(NAL_PPS.rawValue): pps = body
                default: break  // the version SEI is not part of the record
                }
            }
        }
        guard let sps, let pps, let record = AVCDecoderConfigurationRecord.build(sps: sps, pps: pps) else {
            x264_encoder_close(handle)
            throw Self.error("x264_encoder_headers did not produce one SPS and one PPS")
        }
        self.handle = handle
        self.decoderConfigurationRecord = record
        parameterSets = (sps, pps)
        pictureIn = .allocate(capacity: 1)
        pictureOut = .allocate(capacity: 1)
        x264_picture_init(pictureIn)
        x264_picture_init(pictureOut)
    }

    deinit {
        x264_encoder_close(handle)
        pictureIn.deallocate()
        pictureOut.deallocate()
    }

    /// Encodes one canvas. Returns nil when x264 emitted nothing. Output NALs are AVCC (4-byte big-endian
    /// lengths), SEI may be included. The frame must have the configured size.
    public func encode(_ frame: VideoFrame, pts: Int64, forceKeyframe: Bool) throws(CodecError) -> EncodedVideo? {
        try encode(frame, pts: pts, forceKeyframe: forceKeyframe) { avcc, isKeyframe, pts, dts in
            EncodedVideo(data: Array(avcc), isKeyframe: isKeyframe, pts: pts, dts: dts)
        }
    }

    /// Like `encode(_:pts:forceKeyframe:)`, but hands the AVCC bytes to `body` straight from x264's buffer (valid
    /// only during the call) instead of copying them into a new array: the programme's per-canvas path (hot path,
    /// no allocation). Returns what `body` returned, or nil when x264 emitted nothing.
    public func encode<R>(
        _ frame: VideoFrame, pts: Int64, forceKeyframe: Bool,
        _ body: (_ avcc: UnsafeRawBufferPointer, _ isKeyframe: Bool, _ pts: Int64, _ dts: Int64) -> R
    )
        throws(CodecError) -> R?
    {
        guard frame.width == config.width, frame.height == config.height else {
            throw Self.error(
                "frame is \(frame.width)x\(frame.height), encoder expects \(config.width)x\(config.height)")
        }
        let pic = pictureIn
        x264_picture_init(pic)
        pic.pointee.i_type = forceKeyframe ? X264_TYPE_IDR : X264_TYPE_AUTO
        pic.pointee.i_pts = pts
        pic.pointee.img.i_csp = X264_CSP_I420
        pic.pointee.img.i_plane = 3
        pic.pointee.img.i_stride = (Int32(frame.strideY), Int32(frame.strideUV), Int32(frame.strideUV), 0)
        // x264 copies the planes into its own frame during the call, so borrowing the arrays is enough.
        let result: Result<R?, CodecError> = frame.y.withUnsafeBufferPointer { y in
            frame.u.withUnsafeBufferPointer { u in
                frame.v.withUnsafeBufferPointer { v in
                    pic.pointee.img.plane = (
                        UnsafeMutablePointer(mutating: y.baseAddress),
                        UnsafeMutablePointer(mutating: u.baseAddress),
                        UnsafeMutablePointer(mutating: v.baseAddress), nil
                    )
                    defer { pic.pointee.img.plane = (nil, nil, nil, nil) }
                    return encodeCall(pic, body)
                }
            }
        }
        return try result.get()
    }

    /// Drains frames x264 still holds (none under zerolatency, but cheap to ask); call at end of stream.
    public func flush() throws(CodecError) -> [EncodedVideo] {
        var out: [EncodedVideo] = []
        while x264_encoder_delayed_frames(handle) > 0 {
            let encoded = try encodeCall(nil) { avcc, isKeyframe, pts, dts in
                EncodedVideo(data: Array(avcc), isKeyframe: isKeyframe, pts: pts, dts: dts)
            }.get()
            guard let frame = encoded else { break }
            out.append(frame)
        }
        return out
    }

    /// Changes the target bitrate (and VBV with it) on the running encoder (`x264_encoder_reconfig`).
    public func reconfigure(bitrateKbps: Int) throws(CodecError) {
        guard bitrateKbps > 0, bitrateKbps <= 1_000_000 else {
            throw Self.error("bitrate \(bitrateKbps) kbps out of range")
        }
        let param = UnsafeMutablePointer<x264_param_t>.allocate(capacity: 1)
        defer { param.deallocate() }
        x264_encoder_parameters(handle, param)
        Self.setRate(param, kbps: bitrateKbps)
        guard x264_encoder_reconfig(handle, param) >= 0 else {
            throw Self.error("x264_encoder_reconfig refused \(bitrateKbps) kbps")
        }
    }

    private func encodeCall<R>(
        _ pic: UnsafeMutablePointer<x264_picture_t>?,
        _ body: (UnsafeRawBufferPointer, Bool, Int64, Int64) -> R
    ) -> Result<R?, CodecError> {
        var nals: UnsafeMutablePointer<x264_nal_t>?
        var count: Int32 = 0
        let size = x264_encoder_encode(handle, &nals, &count, pic, pictureOut)
        guard size >= 0 else { return .failure(Self.error("x264_encoder_encode failed (\(size))")) }
        guard size > 0, count > 0, let first = nals?.pointee.p_payload else { return .success(nil) }
        // x264 guarantees the payloads of one frame's NALs are contiguous, in order.
        let out = pictureOut.pointee
        return .success(
            body(UnsafeRawBufferPointer(start: first, count: Int(size)), out.b_keyframe != 0, out.i_pts, out.i_dts))
    }

    private static func setRate(_ param: UnsafeMutablePointer<x264_param_t>, kbps: Int) {
        param.pointee.rc.i_rc_method = X264_RC_ABR
        param.pointee.rc.i_bitrate = Int32(kbps)
        param.pointee.rc.i_vbv_max_bitrate = Int32(kbps)
        param.pointee.rc.i_vbv_buffer_size = Int32(kbps)
    }

    private static func validate(_ c: H264EncoderConfig) throws(CodecError) {
        guard c.width >= 16, c.height >= 16, c.width <= 8192, c.height <= 8192, c.width % 2 == 0, c.height % 2 == 0
        else {
            throw error("size \(c.width)x\(c.height) must be even and between 16 and 8192")
        }
        guard (1...240).contains(c.fps) else { throw error("fps \(c.fps) out of range 1...240") }
        guard (1...1_000_000).contains(c.bitrateKbps) else { throw error("bitrate \(c.bitrateKbps) kbps out of range") }
        guard (1...100_000).contains(c.keyintFrames) else {
            throw error("keyint \(c.keyintFrames) frames out of range")
        }
        guard (1...64).contains(c.threads) else { throw error("threads \(c.threads) out of range 1...64") }
    }

    private static func error(_ message: String) -> CodecError { CodecError(library: "x264", message: message) }
}
