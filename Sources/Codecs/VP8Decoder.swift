import CAVCodec
import Media

/// A VP8 decoder for one inbound video stream: libavcodec's native VP8 decoder, which produces the same
/// pictures (VP8 decoding is bit-exact) for about 20 % less CPU than libvpx's on this machine (`make bench`:
/// nine single-threaded decodes of the senders' 360p bitstream, 0.170 vs 0.217 cores). libvpx stays for
/// encoding (tests and benchmarks make their VP8 with it).
///
/// Input is one complete VP8 frame (what the RFC 7741 depacketizer produces). Output either stays in the
/// decoder's pooled buffer, referenced by a `DecodedPicture` (what a room does: the compositor reads it from
/// there), or is copied into the caller's long-lived `VideoFrame` (same-size pictures overwrite it without
/// allocating).
///
/// `@unchecked Sendable`: confined to one thread or serial queue at a time (its stream's ingest queue).
public final class VP8Decoder: @unchecked Sendable {
    /// Largest picture accepted (VP8 allows 16383×16383; a hostile stream must not make us copy that).
    public var maxWidth: Int { decoder.maxWidth }
    public var maxHeight: Int { decoder.maxHeight }
    private let decoder: LibavVideoDecoder

    public init(maxWidth: Int = 4096, maxHeight: Int = 4096) throws(CodecError) {
        decoder = try LibavVideoDecoder(codec: AV_CODEC_ID_VP8, name: "VP8", maxWidth: maxWidth, maxHeight: maxHeight)
    }

    /// Decodes one complete VP8 frame into `frame`. Returns false when no picture came out (a frame that
    /// is not shown).
    public func decode(_ data: [UInt8], into frame: inout VideoFrame) throws(CodecError) -> Bool {
        try decoder.decode(data, into: &frame)
    }

    /// Decodes one complete VP8 frame and leaves the picture in the decoder's buffer, referenced by `picture` (no copy:
    /// what a room draws). `picture` must not be held by anyone else. Returns false when no picture came out.
    public func decode(_ data: [UInt8], into picture: DecodedPicture) throws(CodecError) -> Bool {
        try decoder.decode(data, into: picture)
    }

    /// With libavcodec's own picture buffers instead of the pool: for tests comparing the two.
    init(unpooledMaxWidth maxWidth: Int, maxHeight: Int) throws(CodecError) {
        decoder = try LibavVideoDecoder(
            codec: AV_CODEC_ID_VP8, name: "VP8", maxWidth: maxWidth, maxHeight: maxHeight,
            pooledPictures: false)
    }

    var bufferCounts: DecoderBufferCounts { decoder.bufferCounts }
}
