import HTTPTypes
import Hummingbird

/// `Strict-Transport-Security` on every answer of a server that serves HTTPS (RFC 6797): a browser that has seen it
/// never falls back to plain HTTP for this host, where a token would cross the network in clear.
struct StrictTransportSecurity<Context: RequestContext>: RouterMiddleware {
    static var value: String { "max-age=31536000" }

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    )
        async throws -> Response
    {
        do {
            var response = try await next(request, context)
            response.headers[.strictTransportSecurity] = Self.value
            return response
        } catch let error as HTTPResponseError {
            var response = try error.response(from: request, context: context)
            response.headers[.strictTransportSecurity] = Self.value
            return response
        }
    }
}
