/// Why an SDP offer was refused. Line numbers are 1-based, counted in the text as received.
public enum SDPError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The whole text is larger than `SessionDescription.maxBytes`.
    case tooLarge(bytes: Int)
    /// More lines than `SessionDescription.maxLines`.
    case tooManyLines
    /// A line longer than `SessionDescription.maxLineLength` bytes.
    case lineTooLong(line: Int)
    /// The first line is not a `v=` line.
    case missingVersion
    /// A `v=` line with a version other than 0.
    case unsupportedVersion(String)
    /// A line that is not `<letter>=<value>`.
    case malformedLine(line: Int)
    /// An `m=` line with fewer than four fields.
    case badMediaLine(line: Int)
    /// An `m=` port that is not a number in 0...65535.
    case badPort(line: Int)
    /// An RTP format (in `m=`, `a=rtpmap` or `a=fmtp`) that is not a payload type in 0...127.
    case badPayloadType(line: Int)
    /// An `a=rtpmap` that is not `<pt> <name>/<clock rate>[/<channels>]` with positive numbers.
    case badRtpmap(line: Int)
    /// An `a=ssrc` whose id is not a 32-bit unsigned number.
    case badSsrc(line: Int)
    /// An `a=crypto` that is not `<tag> <suite> inline:<key>[|...]` (RFC 4568 §9.1).
    case badCrypto(line: Int)
    /// No `m=` line at all.
    case noMedia

    public var description: String {
        switch self {
        case .tooLarge(let n): "SDP is \(n) bytes, more than the \(SessionDescription.maxBytes) allowed"
        case .tooManyLines: "SDP has more than \(SessionDescription.maxLines) lines"
        case .lineTooLong(let l): "SDP line \(l) is longer than \(SessionDescription.maxLineLength) bytes"
        case .missingVersion: "SDP does not start with a v= line"
        case .unsupportedVersion(let v): "SDP version is '\(v)', expected 0"
        case .malformedLine(let l): "SDP line \(l) is not of the form <type>=<value>"
        case .badMediaLine(let l): "SDP line \(l): m= needs <media> <port> <proto> <fmt>..."
        case .badPort(let l): "SDP line \(l): m= port is not a number in 0...65535"
        case .badPayloadType(let l): "SDP line \(l): payload type is not a number in 0...127"
        case .badRtpmap(let l): "SDP line \(l): a=rtpmap needs <pt> <encoding>/<clock rate>[/<channels>]"
        case .badSsrc(let l): "SDP line \(l): a=ssrc id is not a 32-bit unsigned number"
        case .badCrypto(let l): "SDP line \(l): a=crypto needs <tag> <suite> inline:<key>[|...]"
        case .noMedia: "SDP has no m= line"
        }
    }
}
