import Media
import Codecs

/// What a participant's video path needs from a decoder; VP8 and H.264 decode the same way.
protocol PictureDecoder: AnyObject {
    func decode(_ data: [UInt8], into frame: inout VideoFrame) throws(CodecError) -> Bool
}

extension VP8Decoder: PictureDecoder {}
extension H264Decoder: PictureDecoder {}
