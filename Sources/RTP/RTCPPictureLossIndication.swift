/// Picture Loss Indication (RFC 4585 §6.3.1): payload-specific feedback (PT=206) with FMT=1 and no FCI.
/// Cohost sends it to ask a participant's encoder for a keyframe.
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |V=2|P|  FMT=1  |    PT=206     |          length=2             |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                  SSRC of packet sender                        |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                  SSRC of media source                         |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
public struct PictureLossIndication: Equatable, Sendable, RTCPWireFormat {
    public static let formatType: UInt8 = 1

    public var senderSSRC: UInt32
    public var mediaSSRC: UInt32

    public init(senderSSRC: UInt32, mediaSSRC: UInt32) {
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
    }

    /// Parses one PLI packet (bytes past its declared length are ignored).
    public init(bytes: [UInt8]) throws(RTCPError) {
        let (header, body, _) = try RTCPHeader.parse(bytes, at: 0)
        try self.init(header, bytes, body)
    }

    init(_ header: RTCPHeader, _ b: [UInt8], _ body: Range<Int>) throws(RTCPError) {
        // For feedback packets the count field is the message type; anything but 1 is another message.
        try header.checkFeedback(packetType: RTCPHeader.payloadFeedbackType, format: Self.formatType, body: body)
        self.init(senderSSRC: readUInt32(b, body.lowerBound), mediaSSRC: readUInt32(b, body.lowerBound + 4))
    }

    public func append(to out: inout [UInt8]) {
        out.reserve(additional: 12)
        RTCPHeader(count: Self.formatType, packetType: RTCPHeader.payloadFeedbackType, length: 2).append(to: &out)
        out.appendBigEndian(senderSSRC)
        out.appendBigEndian(mediaSSRC)
    }
}
