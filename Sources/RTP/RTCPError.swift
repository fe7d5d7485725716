/// Why an RTCP packet or compound packet could not be parsed.
public enum RTCPError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Fewer than 4 bytes where a common header should start (or an empty compound packet).
    case tooShort
    /// The version field is not 2.
    case badVersion(UInt8)
    /// The header's length field points past the end of the datagram.
    case lengthOverrun(packetType: UInt8)
    /// The P bit is set but the padding count is 0, not a multiple of 4, or larger than the packet body.
    case badPadding(packetType: UInt8)
    /// The body is shorter than its counts (report blocks, sources, reason, SSRCs) require.
    case truncatedBody(packetType: UInt8)
    /// A typed parser was handed a different packet type (or feedback message type).
    case wrongPacketType(expected: UInt8, got: UInt8)
    /// A feedback packet (RTPFB/PSFB) with a different FMT than the parser handles.
    case wrongFeedbackType(expected: UInt8, got: UInt8)
    /// An application-layer feedback packet (PSFB FMT=15) without the expected 4-byte identifier.
    case wrongApplicationIdentifier

    public var description: String {
        switch self {
        case .tooShort: "RTCP packet shorter than its 4-byte common header"
        case .badVersion(let v): "RTCP version is \(v), expected 2"
        case .lengthOverrun(let pt): "RTCP packet type \(pt): length field runs past the end of the datagram"
        case .badPadding(let pt):
            "RTCP packet type \(pt): padding count is 0, not a multiple of 4, or larger than the body"
        case .truncatedBody(let pt): "RTCP packet type \(pt): body shorter than its counts require"
        case .wrongPacketType(let e, let g): "RTCP packet type \(g) where \(e) was expected"
        case .wrongFeedbackType(let e, let g): "RTCP feedback message type FMT=\(g) where FMT=\(e) was expected"
        case .wrongApplicationIdentifier: "RTCP application-layer feedback without the expected identifier"
        }
    }
}
