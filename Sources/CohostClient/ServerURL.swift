import Foundation

/// The server's base URL (`--url`): where API paths, the events WebSocket and join links are resolved.
public struct ServerURL: Sendable, Equatable, CustomStringConvertible {
    public static let standard = "http://127.0.0.1:7880"

    /// Without a trailing slash, so a path (which starts with one) is appended as it is; a proxy's prefix is kept.
    public let base: String

    /// nil unless `text` is an absolute http or https URL with a host.
    public init?(_ text: String) {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", components.host?.isEmpty == false,
            components.query == nil, components.fragment == nil
        else { return nil }
        var base = text
        while base.hasSuffix("/") { base.removeLast() }
        self.base = base
    }

    public var description: String { base }

    /// The host part (an IPv6 literal without its brackets).
    public var host: String? { URLComponents(string: base)?.host }

    /// `path` (starting with /) under the server.
    public func url(_ path: String) -> URL? { URL(string: base + path) }

    /// The same place over ws:// or wss://, for the events socket.
    public func webSocket(_ path: String) -> String {
        let lower = base.lowercased()
        if lower.hasPrefix("https://") { return "wss://" + base.dropFirst("https://".count) + path }
        return "ws://" + base.dropFirst("http://".count) + path
    }

    /// A link the API gives relative to the server (an invite's `/join/{room}#token=…`) as a full URL.
    public func absolute(link: String) -> String { link.hasPrefix("/") ? base + link : link }

    /// One path segment as the user typed it, percent-encoded: a name with a slash or a space reaches the server
    /// whole, which then judges it (400 invalid_room) instead of the URL breaking.
    public static func segment(_ text: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "/?#;")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}
