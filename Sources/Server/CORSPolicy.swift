import Hummingbird

/// Cross-origin access for browser pages on other origins (the join page of a show's own site, a WHIP client in a
/// web app): a request whose `Origin` is allowed gets `Access-Control-Allow-Origin` with that origin, and a
/// preflight (`OPTIONS` with `Access-Control-Request-Method`) is answered here with the methods and headers the API
/// uses. `Location` is exposed, so a page can find its participant or WHIP session. Tokens travel in the
/// `Authorization` header, never in cookies, so no credentials mode is offered. No origin is allowed by default.
struct CORSPolicy<Context: RequestContext>: RouterMiddleware {
    let origins: Set<String>
    let anyOrigin: Bool

    init(origins: [String]) {
        anyOrigin = origins.contains("*")
        self.origins = Set(origins.filter { $0 != "*" })
    }

    static var allowedMethods: String { "GET, POST, PUT, PATCH, DELETE, OPTIONS" }
    static var allowedHeaders: String { "Authorization, Content-Type, If-Match" }

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let origin = request.headers[.origin], anyOrigin || origins.contains(origin) else {
            return try await next(request, context)
        }
        if request.method == .options, request.headers[.accessControlRequestMethod] != nil {
            var response = Response(status: .noContent)
            allow(origin, in: &response.headers)
            response.headers[.accessControlAllowMethods] = Self.allowedMethods
            response.headers[.accessControlAllowHeaders] = Self.allowedHeaders
            response.headers[.accessControlMaxAge] = "600"
            return response
        }
        var response = try await next(request, context)
        allow(origin, in: &response.headers)
        response.headers[.accessControlExposeHeaders] = "Location, ETag, Link"
        return response
    }

    private func allow(_ origin: String, in headers: inout HTTPFields) {
        headers[.accessControlAllowOrigin] = anyOrigin ? "*" : origin
        if !anyOrigin { headers[.vary] = "Origin" }
    }
}
