import Foundation
import HTTPTypes
import Hummingbird
import Rooms

/// The last tenth of `max_connections` (at least one) is kept for callers with a valid token: once that many
/// connections are open, a request without one (anyone's, a scanner's, a flood's) is answered 503 `server_busy` and
/// its connection closed, while guests joining with their tokens and producers with theirs are still served. Health
/// checks are always answered. Counted as `cohost_http_requests_refused_reserve`.
struct ConnectionReserve<Context: RequestContext>: RouterMiddleware {
    let connections: ConnectionLimit
    let keys: APIKeys
    let maxTokenTTLSeconds: Int64

    /// Connections left for token holders.
    static func reserve(of limit: Int) -> Int { max(1, limit / 10) }

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let soft = connections.limit - Self.reserve(of: connections.limit)
        guard connections.openConnections > soft, request.uri.path != "/healthz" else {
            return try await next(request, context)
        }
        let hls = request.uri.path.contains("/hls/")
        if (try? Caller.authenticate(request, keys: keys, allowQuery: hls, maxLifetime: maxTokenTTLSeconds)) != nil {
            return try await next(request, context)
        }
        connections.noteReserveRefusal()
        var response = APIError.response(
            status: .serviceUnavailable, code: "server_busy",
            message: "this server is near its connection limit and serves only callers with a token now")
        response.headers[.connection] = "close"
        response.headers[.retryAfter] = "5"
        return response
    }
}
