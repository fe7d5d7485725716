import HTTPTypes
import Hummingbird

/// Which web pages may reach the server from a browser beyond what CORS covers. A WebSocket is not subject to CORS:
/// any page could open the events socket of a server its visitor reaches, with a token it got or (in dev mode,
/// whose key is published) minted itself. So the events socket takes a browser's `Origin` only when it is the
/// server's own or one of `cors_origins`; and a dev-mode server answers only requests that name it by a loopback
/// `Host`, which a page on another name resolving to 127.0.0.1 (DNS rebinding) cannot send.
public struct WebOrigins: Sendable {
    public var corsOrigins: [String]
    /// Dev mode: only `Host: 127.x.x.x`, `localhost` or `[::1]` (with any port) is answered.
    public var loopbackHostsOnly: Bool

    public init(corsOrigins: [String] = [], loopbackHostsOnly: Bool = false) {
        self.corsOrigins = corsOrigins
        self.loopbackHostsOnly = loopbackHostsOnly
    }

    /// Whether a WebSocket with `origin` may open on the server `host` names. A browser page's origin is `http://…`,
    /// `https://…` or `null`; no `Origin`, or another scheme (WebSocket clients send `ws://host`), is a program's.
    public func allowsSocket(origin: String?, host: String?) -> Bool {
        guard let origin else { return true }
        let lowered = origin.lowercased()
        guard lowered == "null" || lowered.hasPrefix("http://") || lowered.hasPrefix("https://") else { return true }
        if corsOrigins.contains("*") || corsOrigins.contains(origin) { return true }
        guard let host, let scheme = origin.range(of: "://") else { return false }
        // Same origin: the page came from this server, under the name the request uses.
        return origin[scheme.upperBound...].lowercased() == host.lowercased()
    }

    /// Whether a request naming `host` is answered.
    public func allowsHost(_ host: String?) -> Bool {
        guard loopbackHostsOnly else { return true }
        guard let host else { return false }
        return Self.isLoopbackName(host)
    }

    /// `127.x.x.x`, `localhost` or `[::1]`, with or without a port.
    static func isLoopbackName(_ host: String) -> Bool {
        var name = host.lowercased()
        if name.hasPrefix("[") {
            guard let close = name.firstIndex(of: "]") else { return false }
            return name[name.index(after: name.startIndex)..<close] == "::1"
        }
        if let colon = name.lastIndex(of: ":") { name = String(name[..<colon]) }
        if name == "localhost" { return true }
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }
}

/// Refuses, in dev mode, a request whose `Host` is not a loopback name (403 `host_forbidden`).
struct LoopbackHostOnly<Context: RequestContext>: RouterMiddleware {
    let origins: WebOrigins

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    )
        async throws -> Response
    {
        guard origins.allowsHost(request.head.authority) else {
            throw APIError(
                status: .forbidden, code: "host_forbidden",
                message:
                    "a dev-mode server answers only requests to 127.0.0.1, localhost or [::1]; this one names "
                    + "'\(request.head.authority ?? "")'")
        }
        return try await next(request, context)
    }
}
