/// Why an RTP packet (or an RTP payload descriptor) could not be parsed.
public enum RTPError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Fewer than the 12 bytes of the fixed RTP header.
    case tooShort
    /// The version field (top two bits) is not 2.
    case badVersion(UInt8)
    /// The CSRC count says more identifiers than the packet holds.
    case csrcOverrun
    /// The header extension (or its 4-byte preamble) runs past the end of the packet.
    case extensionOverrun
    /// The P bit is set but the padding count is 0 or larger than what follows the header.
    case badPadding
    /// The payload is empty where the payload format needs at least one byte.
    case emptyPayload
    /// A payload descriptor (VP8, RFC 7741 §4.2) announces fields past the end of the payload.
    case truncatedPayloadDescriptor

    public var description: String {
        switch self {
        case .tooShort: "RTP packet shorter than the 12-byte fixed header"
        case .badVersion(let v): "RTP version is \(v), expected 2"
        case .csrcOverrun: "RTP CSRC count runs past the end of the packet"
        case .extensionOverrun: "RTP header extension runs past the end of the packet"
        case .badPadding: "RTP padding count is 0 or larger than the packet payload"
        case .emptyPayload: "RTP payload is empty"
        case .truncatedPayloadDescriptor: "RTP payload descriptor runs past the end of the payload"
        }
    }
}
