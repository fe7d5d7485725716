import Media
import Codecs

/// What a participant's video path needs from a decoder; VP8 and H.264 decode the same way.
protocol PictureDecoder: AnyObject {
    /// Decodes into `picture`, which nobody else holds; false when no picture came out.
    func decode(_ data: [UInt8], into picture: DecodedPicture) throws(CodecError) -> Bool
}

extension VP8Decoder: PictureDecoder {}
extension H264Decoder: PictureDecoder {}
