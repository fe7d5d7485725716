import CAVCodec
import Media

/// A decoded picture left where the decoder put it: a reference to one of libavcodec's (pooled,
/// reference-counted) picture buffers, drawn from there instead of being copied out first.
///
/// Made once per presenter slot and decoded into again and again (`VP8Decoder.decode(_:into:)`): each decode
/// drops the reference to the old picture and takes one to the new, which allocates nothing of ours. The
/// decoders never write into a progressive picture they have output (later frames go to other pool buffers), so
/// the pixels stay as they are until the next decode into this object. Interlaced pictures are the exception
/// (H.264 can output a lone first field, then decode its second field into the same buffer): those are copied
/// into a buffer of their own (`LibavVideoDecoder`).
///
/// `@unchecked Sendable`: written only by its decoder's thread, and only while nobody else holds it
/// (the caller checks `isKnownUniquelyReferenced` first); read by any thread that holds it (a tile being drawn).
public final class DecodedPicture: ExternalPicture, @unchecked Sendable {
    let frame: UnsafeMutablePointer<AVFrame>
    public private(set) var width = 0
    public private(set) var height = 0
    /// Whether a picture is held (false until the first decode, and after one failed).
    public var isEmpty: Bool { width == 0 }

    public init() throws(CodecError) {
        guard let frame = av_frame_alloc() else { throw AVError.error("av_frame_alloc failed") }
        self.frame = frame
    }

    deinit {
        var frame: UnsafeMutablePointer<AVFrame>? = frame
        av_frame_free(&frame)  // returns the buffer to the decoder's pool, which outlives the decoder if need be
    }

    /// Drops the picture (the buffer goes back to the decoder's pool).
    package func clear() {
        av_frame_unref(frame)
        width = 0
        height = 0
    }

    /// Takes the picture `frame` now refers to, as checked by its decoder (`planes` are that picture's).
    func adopt(_ planes: PlanePointers) {
        width = planes.width
        height = planes.height
    }

    package func withPlanes<R>(_ body: (PlanePointers) -> R) -> R {
        let f = frame.pointee
        // Only decoded pictures reach a tile; one that is empty (never decoded into, or refused) lends a black pixel.
        guard width > 0, let y = f.data.0, let u = f.data.1, let v = f.data.2 else {
            return PlanePointers.withBlackPixel(body)
        }
        return body(
            PlanePointers(
                width: width, height: height, y: y, u: u, v: v, strideY: Int(f.linesize.0),
                strideU: Int(f.linesize.1), strideV: Int(f.linesize.2)))
    }
}
