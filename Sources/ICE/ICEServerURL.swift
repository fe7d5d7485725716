/// A STUN or TURN server's URI as clients take it in `iceServers` (RFC 7064 `stun:`/`stuns:`, RFC 7065
/// `turn:`/`turns:` with an optional `?transport=udp|tcp`). Parsed to refuse a mistyped setting at start and to
/// know where to send a Binding request; handed to clients as given.
public struct ICEServerURL: Sendable, Equatable, CustomStringConvertible {
    public enum Scheme: String, Sendable { case stun, stuns, turn, turns }

    public let scheme: Scheme
    /// A name, an IPv4 address, or an IPv6 address without its brackets.
    public let host: String
    public let port: Int
    /// `udp` or `tcp` when the URI names one (TURN only).
    public let transport: String?
    /// The URI as given.
    public let text: String

    public var description: String { text }
    public var isTURN: Bool { scheme == .turn || scheme == .turns }

    /// Nil when `text` is not such a URI: an unknown scheme, no host, a port outside 1...65535, a query other than
    /// `transport=udp|tcp` (and none on a STUN URI), or characters a host cannot have.
    public init?(_ text: String) {
        guard let colon = text.firstIndex(of: ":"), let scheme = Scheme(rawValue: String(text[..<colon]).lowercased())
        else { return nil }
        var rest = Substring(text[text.index(after: colon)...])
        var transport: String?
        if let question = rest.firstIndex(of: "?") {
            let query = rest[rest.index(after: question)...].lowercased()
            guard scheme == .turn || scheme == .turns, query == "transport=udp" || query == "transport=tcp" else {
                return nil
            }
            transport = String(query.dropFirst("transport=".count))
            rest = rest[..<question]
        }
        let host: Substring
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return nil }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return nil }
                portText = after.dropFirst()
            }
            guard !host.isEmpty, host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { return nil }
        } else {
            let parts = rest.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            host = parts[0]
            if parts.count == 2 { portText = parts[1] }
            guard !host.isEmpty,
                host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") })
            else { return nil }
        }
        let secure = scheme == .stuns || scheme == .turns
        let port: Int
        if let portText {
            guard let value = Int(portText), (1...65_535).contains(value), portText.allSatisfy(\.isNumber) else {
                return nil
            }
            port = value
        } else {
            port = secure ? 5_349 : 3_478
        }
        self.scheme = scheme
        self.host = String(host)
        self.port = port
        self.transport = transport
        self.text = text
    }
}
