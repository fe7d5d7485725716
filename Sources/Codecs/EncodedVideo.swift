/// One compressed video frame as an encoder emitted it.
///
/// For H.264 `data` is AVCC (NAL units with 4-byte big-endian length prefixes), as FLV carries it;
/// for VP8 it is one complete VP8 frame. `pts` and `dts` are in the encoder's timebase (frames).
public struct EncodedVideo: Sendable, Equatable {
    public var data: [UInt8]
    public var isKeyframe: Bool
    public var pts: Int64
    public var dts: Int64

    public init(data: [UInt8], isKeyframe: Bool, pts: Int64, dts: Int64) {
        self.data = data
        self.isKeyframe = isKeyframe
        self.pts = pts
        self.dts = dts
    }
}
