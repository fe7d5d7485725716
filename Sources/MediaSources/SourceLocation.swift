/// Decides, before every connect of a pulled source, which address its host may be reached at: the host is
/// resolved and each address checked then (not when the source was added), so a name cannot move into a refused
/// network later.
public protocol SourceDestinations: Sendable {
    /// The address (text, as `inet_ntop` writes it) to connect to for `host`; nil when it is refused or does not
    /// resolve (the implementation logs why: the source's state only says it cannot connect).
    func address(for host: String) -> String?
    /// Whether why a connection to `host` failed may be told in the source's state (a host the operator listed).
    func tellsFailures(of host: String) -> Bool
}

/// A network source's URL taken apart where a connect needs it: the host to check, and the same URL aimed at the
/// checked address so that libavformat does not look the name up again.
public struct SourceLocation: Equatable, Sendable {
    public var scheme: String
    /// Without brackets for IPv6.
    public var host: String
    /// The authority's range in `url`, after any user information.
    private var hostRange: Range<String.Index>
    private var hostPort: String
    let url: String

    public init?(_ url: String) {
        guard let separator = url.range(of: "://") else { return nil }
        scheme = url[..<separator.lowerBound].lowercased()
        let rest = url[separator.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? url.endIndex
        let authority = url[separator.upperBound..<authorityEnd]
        let start = authority.lastIndex(of: "@").map { url.index(after: $0) } ?? authority.startIndex
        let hostPort = url[start..<authorityEnd]
        let hostEnd: String.Index
        if hostPort.hasPrefix("["), let close = hostPort.firstIndex(of: "]") {
            host = String(hostPort[hostPort.index(after: hostPort.startIndex)..<close])
            hostEnd = hostPort.index(after: close)
        } else {
            hostEnd = hostPort.firstIndex(of: ":") ?? hostPort.endIndex
            host = String(hostPort[..<hostEnd])
        }
        // Only a port may follow the host: anything else would be read differently by libavformat.
        let port = hostPort[hostEnd...]
        guard !host.isEmpty, !host.contains("["), !host.contains("]"),
            port.isEmpty || (port.count <= 6 && port.first == ":" && port.dropFirst().allSatisfy(\.isASCIIDigit))
        else { return nil }
        hostRange = start..<hostEnd
        self.hostPort = String(hostPort)
        self.url = url
    }

    /// Whether the connection runs over TLS: the name stays in the URL (SNI, and certificates name hosts), so
    /// libavformat resolves it again after the check.
    var isTLS: Bool { scheme == "rtsps" || scheme == "rtmps" || scheme == "https" }

    /// The URL with its host replaced by `address`.
    func aimed(at address: String) -> String {
        var aimed = url
        aimed.replaceSubrange(hostRange, with: address.contains(":") ? "[\(address)]" : address)
        return aimed
    }

    /// The `Host` header an HTTP request to the aimed URL must still carry.
    var hostHeader: String { hostPort }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
