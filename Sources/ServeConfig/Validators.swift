import Foundation

/// A `HOST:PORT` listener address with a port in 1...65535 (the host may be empty: all interfaces).
public struct HostPort: Sendable, Equatable {
    public let host: String
    public let port: Int
    public init?(_ text: String) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
            (1...65535).contains(port), colon > text.startIndex
        else { return nil }
        host = String(text[..<colon])
        self.port = port
    }
}

/// Whether `text` is a dotted-quad IPv4 address.
public func isIPv4(_ text: String) -> Bool {
    let parts = text.split(separator: ".", omittingEmptySubsequences: false)
    return parts.count == 4 && parts.allSatisfy { p in p.count <= 3 && UInt8(p) != nil }
}

/// A numeric IPv6 address (no scope, no brackets).
public func isIPv6(_ text: String) -> Bool {
    guard text.contains(":"), !text.contains("%"), text.utf8.count <= 45 else { return false }
    var raw = in6_addr()
    return inet_pton(AF_INET6, text, &raw) == 1
}

/// `--webhook-url` values: absolute http(s) URLs with a host.
public enum WebhookURL {
    public static func parse(_ text: String) -> URL? {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host, !host.isEmpty
        else { return nil }
        return url
    }
}
