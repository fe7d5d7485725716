import CAVCodec
import Media

/// An H.264 decoder (libavcodec) for one inbound video stream.
///
/// Input is one access unit in Annex-B form (start-code separated NAL units, SPS/PPS in band), which is
/// what an RFC 6184 depacketizer produces. Output is copied into the caller's reused `VideoFrame`.
///
/// `@unchecked Sendable`: confined to one thread or serial queue at a time (its stream's ingest queue).
public final class H264Decoder: @unchecked Sendable {
    /// Largest picture accepted, and the largest access unit (bytes) fed to libavcodec.
    public var maxWidth: Int { decoder.maxWidth }
    public var maxHeight: Int { decoder.maxHeight }
    public static let maxAccessUnitBytes = LibavVideoDecoder.maxAccessUnitBytes
    private let decoder: LibavVideoDecoder

    public init(maxWidth: Int = 4096, maxHeight: Int = 4096) throws(CodecError) {
        decoder = try LibavVideoDecoder(
            codec: AV_CODEC_ID_H264, name: "H.264", maxWidth: maxWidth, maxHeight: maxHeight)
    }

    /// Decodes one Annex-B access unit into `output` (resized when the stream size changes).
    /// Returns false when libavcodec produced no picture yet.
    public func decode(_ annexB: [UInt8], into output: inout VideoFrame) throws(CodecError) -> Bool {
        try decoder.decode(annexB, into: &output)
    }

    /// Decodes one access unit and leaves the picture in the decoder's buffer, referenced by `picture` (no copy:
    /// what a room draws). `picture` must not be held by anyone else. Returns false when no picture came out.
    public func decode(_ annexB: [UInt8], into picture: DecodedPicture) throws(CodecError) -> Bool {
        try decoder.decode(annexB, into: picture)
    }

    /// With libavcodec's own picture buffers instead of the pool: for tests comparing the two.
    init(unpooledMaxWidth maxWidth: Int, maxHeight: Int) throws(CodecError) {
        decoder = try LibavVideoDecoder(
            codec: AV_CODEC_ID_H264, name: "H.264", maxWidth: maxWidth, maxHeight: maxHeight,
            pooledPictures: false)
    }

    var bufferCounts: DecoderBufferCounts { decoder.bufferCounts }
}
