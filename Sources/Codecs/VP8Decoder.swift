import CVPX
import Media

/// A VP8 decoder (libvpx) for one inbound video stream.
///
/// `@unchecked Sendable`: the codec context is not thread-safe; an instance is confined to one thread or
/// serial queue at a time (its stream's ingest queue).
public final class VP8Decoder: @unchecked Sendable {
    /// Largest picture accepted (VP8 allows 16383×16383; a hostile stream must not make us copy that).
    public let maxWidth: Int
    public let maxHeight: Int
    /// Heap-allocated: libvpx keeps a pointer to its context for the decoder's lifetime.
    private let context: UnsafeMutablePointer<vpx_codec_ctx_t>

    public init(maxWidth: Int = 4096, maxHeight: Int = 4096) throws(CodecError) {
        self.maxWidth = maxWidth
        self.maxHeight = maxHeight
        context = .allocate(capacity: 1)
        context.initialize(to: vpx_codec_ctx_t())
        var cfg = vpx_codec_dec_cfg_t(threads: 1, w: 0, h: 0)
        let status = cohost_vpx_dec_init(context, vpx_codec_vp8_dx(), &cfg, 0)
        // Fully initialised here, so a throw runs deinit; vpx_codec_destroy is a no-op on a failed context.
        guard status == VPX_CODEC_OK else { throw VPXError.error(status, "vpx_codec_dec_init(vp8)") }
    }

    deinit {
        vpx_codec_destroy(context)
        context.deallocate()
    }

    /// Decodes one complete VP8 frame into `frame` (resized via `frame.resize` when the stream size changes;
    /// planes copied row by row from the `vpx_image_t`, honouring its strides). `frame` is the caller's
    /// long-lived buffer: same-size pictures overwrite it without allocating.
    /// Returns false when libvpx produced no picture (e.g. a frame that is not shown).
    public func decode(_ data: [UInt8], into frame: inout VideoFrame) throws(CodecError) -> Bool {
        guard !data.isEmpty else { throw VPXError.error("empty VP8 frame") }
        guard data.count <= Int(UInt32.max) else { throw VPXError.error("VP8 frame too large") }
        let status = data.withUnsafeBufferPointer {
            vpx_codec_decode(context, $0.baseAddress, UInt32($0.count), nil, 0)
        }
        guard status == VPX_CODEC_OK else { throw VPXError.error(context, "vpx_codec_decode") }
        var iterator: vpx_codec_iter_t?
        var produced = false
        while let image = vpx_codec_get_frame(context, &iterator) {
            try copy(image.pointee, into: &frame)
            produced = true
        }
        return produced
    }

    private func copy(_ img: vpx_image_t, into frame: inout VideoFrame) throws(CodecError) {
        guard img.fmt == VPX_IMG_FMT_I420 else { throw VPXError.error("unexpected image format \(img.fmt.rawValue)") }
        let w = Int(img.d_w), h = Int(img.d_h)
        guard w > 0, h > 0, w <= maxWidth, h <= maxHeight else {
            throw VPXError.error("picture \(w)x\(h) outside 1x1...\(maxWidth)x\(maxHeight)")
        }
        guard let py = img.planes.0, let pu = img.planes.1, let pv = img.planes.2 else {
            throw VPXError.error("decoded image without planes")
        }
        frame.resize(width: w, height: h)
        let cw = (w + 1) / 2, ch = (h + 1) / 2
        Self.copyPlane(py, stride: Int(img.stride.0), width: w, height: h, into: &frame.y)
        Self.copyPlane(pu, stride: Int(img.stride.1), width: cw, height: ch, into: &frame.u)
        Self.copyPlane(pv, stride: Int(img.stride.2), width: cw, height: ch, into: &frame.v)
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
