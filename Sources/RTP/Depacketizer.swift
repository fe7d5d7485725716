/// One compressed frame reassembled from RTP payloads.
public struct EncodedFrame: Equatable, Sendable {
    public var data: [UInt8]
    public var rtpTimestamp: UInt32
    /// A frame decodable on its own. Always true for audio, which has no such concept.
    public var isKeyframe: Bool
    /// Packets were lost right before this frame: an audio decoder can run FEC/PLC for the gap.
    public var precededByLoss: Bool

    public init(data: [UInt8], rtpTimestamp: UInt32, isKeyframe: Bool, precededByLoss: Bool = false) {
        self.data = data
        self.rtpTimestamp = rtpTimestamp
        self.isKeyframe = isKeyframe
        self.precededByLoss = precededByLoss
    }
}

/// Turns the packets of one stream back into frames.
public protocol Depacketizer: Sendable {
    /// Feed packets in sequence order. `afterLoss` = true when packets were lost just before this one.
    mutating func push(_ packet: RTPPacket, afterLoss: Bool) -> EncodedFrame?

    /// A second frame completed by the last `push`, if any (call after every push until nil).
    /// This happens when a frame with no marker bit is closed by a new timestamp whose first
    /// packet also carries the marker.
    mutating func takeReadyFrame() -> EncodedFrame?

    /// Frames dropped, or known to be missing, because of loss, corruption or size: the video
    /// decoder's reference chain is broken and a keyframe is needed.
    var droppedFrames: Int { get }
}

extension Depacketizer {
    public mutating func takeReadyFrame() -> EncodedFrame? { nil }
    public var droppedFrames: Int { 0 }
}
