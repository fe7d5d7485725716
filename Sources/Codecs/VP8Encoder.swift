import CVPX
import Media

/// A realtime VP8 encoder (libvpx, one thread, CBR): the room view sent back to participants, and real streams for
/// tests and the demo sender.
///
/// `@unchecked Sendable`: the codec context is not thread-safe; an instance is confined to one thread or
/// serial queue at a time.
public final class VP8Encoder: @unchecked Sendable {
    public let width: Int
    public let height: Int
    /// Heap-allocated: libvpx keeps pointers to its context and image descriptor.
    private let context: UnsafeMutablePointer<vpx_codec_ctx_t>
    /// Reused image descriptor; its plane pointers are set to the caller's arrays for the duration of each call.
    private let image: UnsafeMutablePointer<vpx_image_t>
    /// The configuration, kept to change the bitrate of the running encoder.
    private let configuration: UnsafeMutablePointer<vpx_codec_enc_cfg_t>

    public init(width: Int, height: Int, fps: Int, bitrateKbps: Int) throws(CodecError) {
        guard (2...8192).contains(width), (2...8192).contains(height) else {
            throw VPXError.error("size \(width)x\(height) out of range")
        }
        guard (1...240).contains(fps), (1...100_000).contains(bitrateKbps) else {
            throw VPXError.error("fps \(fps) or bitrate \(bitrateKbps) kbps out of range")
        }
        self.width = width
        self.height = height
        var cfg = vpx_codec_enc_cfg_t()
        let defaults = vpx_codec_enc_config_default(vpx_codec_vp8_cx(), &cfg, 0)
        guard defaults == VPX_CODEC_OK else { throw VPXError.error(defaults, "vpx_codec_enc_config_default(vp8)") }
        cfg.g_w = UInt32(width)
        cfg.g_h = UInt32(height)
        cfg.g_timebase = vpx_rational(num: 1, den: Int32(fps))
        cfg.rc_target_bitrate = UInt32(bitrateKbps)
        cfg.rc_end_usage = VPX_CBR
        cfg.g_threads = 1
        cfg.g_lag_in_frames = 0  // realtime: every input frame comes out of the same call
        cfg.g_error_resilient = UInt32(VPX_ERROR_RESILIENT_DEFAULT)
        cfg.kf_max_dist = UInt32(fps * 10)
        context = .allocate(capacity: 1)
        context.initialize(to: vpx_codec_ctx_t())
        let status = cohost_vpx_enc_init(context, vpx_codec_vp8_cx(), &cfg, 0)
        guard status == VPX_CODEC_OK else {
            let error = VPXError.error(status, "vpx_codec_enc_init(vp8)")
            context.deallocate()
            throw error
        }
        configuration = .allocate(capacity: 1)
        configuration.initialize(to: cfg)
        image = .allocate(capacity: 1)
        image.initialize(to: vpx_image_t())
        image.pointee.fmt = VPX_IMG_FMT_I420
        image.pointee.w = UInt32(width)
        image.pointee.h = UInt32(height)
        image.pointee.d_w = UInt32(width)
        image.pointee.d_h = UInt32(height)
        image.pointee.x_chroma_shift = 1
        image.pointee.y_chroma_shift = 1
        image.pointee.bps = 12
        let cs = Int32((width + 1) / 2)
        image.pointee.stride = (Int32(width), cs, cs, 0)
        _ = cohost_vp8e_set_cpuused(context, -6)  // realtime speed; a refused speed only costs CPU
    }

    deinit {
        vpx_codec_destroy(context)
        context.deallocate()
        image.deallocate()
        configuration.deallocate()
    }

    /// The target bitrate now, kbit/s.
    public var bitrateKbps: Int { Int(configuration.pointee.rc_target_bitrate) }

    /// Changes the target bitrate of the running encoder (`vpx_codec_enc_config_set`).
    public func setBitrate(kbps: Int) throws(CodecError) {
        guard (1...100_000).contains(kbps) else { throw VPXError.error("bitrate \(kbps) kbps out of range") }
        configuration.pointee.rc_target_bitrate = UInt32(kbps)
        let status = vpx_codec_enc_config_set(context, configuration)
        guard status == VPX_CODEC_OK else { throw VPXError.error(context, "vpx_codec_enc_config_set") }
    }

    /// Encodes one frame (of the configured size); `pts` is in frames. Returns the packets libvpx emitted
    /// (normally exactly one).
    public func encode(_ frame: VideoFrame, pts: Int64, forceKeyframe: Bool) throws(CodecError) -> [EncodedVideo] {
        var out: [EncodedVideo] = []
        try encode(frame, pts: pts, forceKeyframe: forceKeyframe) { bytes, key, pts in
            out.append(EncodedVideo(data: Array(bytes), isKeyframe: key, pts: pts, dts: pts))
        }
        return out
    }

    /// Like `encode(_:pts:forceKeyframe:)`, but hands each compressed frame to `body` straight from libvpx's
    /// buffer (valid only during the call): the room view's per-frame path allocates nothing.
    public func encode(
        _ frame: VideoFrame, pts: Int64, forceKeyframe: Bool,
        _ body: (_ data: UnsafeRawBufferPointer, _ isKeyframe: Bool, _ pts: Int64) -> Void
    ) throws(CodecError) {
        guard frame.width == width, frame.height == height else {
            throw VPXError.error("frame is \(frame.width)x\(frame.height), encoder expects \(width)x\(height)")
        }
        let flags: vpx_enc_frame_flags_t = forceKeyframe ? cohost_vpx_efflag_force_kf() : 0
        let image = self.image, context = self.context
        // libvpx copies the planes into its own buffers during the call, so borrowing the arrays is enough.
        let status = frame.y.withUnsafeBufferPointer { y in
            frame.u.withUnsafeBufferPointer { u in
                frame.v.withUnsafeBufferPointer { v in
                    image.pointee.planes = (
                        UnsafeMutablePointer(mutating: y.baseAddress),
                        UnsafeMutablePointer(mutating: u.baseAddress),
                        UnsafeMutablePointer(mutating: v.baseAddress), nil
                    )
                    defer { image.pointee.planes = (nil, nil, nil, nil) }
                    return vpx_codec_encode(context, image, pts, 1, flags, UInt(cohost_vpx_dl_realtime()))
                }
            }
        }
        guard status == VPX_CODEC_OK else { throw VPXError.error(context, "vpx_codec_encode") }
        var iterator: vpx_codec_iter_t?
        while let packet = vpx_codec_get_cx_data(context, &iterator) {
            guard packet.pointee.kind == VPX_CODEC_CX_FRAME_PKT else { continue }
            let f = packet.pointee.data.frame
            guard let buf = f.buf, f.sz > 0 else { continue }
            let key = f.flags & vpx_codec_frame_flags_t(VPX_FRAME_IS_KEY) != 0
            body(UnsafeRawBufferPointer(start: buf, count: Int(f.sz)), key, f.pts)
        }
    }
}
