import HTTPTypes
import Hummingbird

/// Every path the server answers and the methods it takes there. Another method on one of these paths is 405
/// `method_not_allowed` with `Allow` (RFC 9110 §15.5.6), not 404: the path exists. `MethodTableTests` checks that
/// each listed pair is routed, so the table cannot drift from the routes.
enum MethodTable {
    static let api: [(path: String, methods: [HTTPRequest.Method])] = [
        ("healthz", [.get]),
        ("metrics", [.get]),
        ("v1/nodes", [.get]),
        ("v1/rooms", [.get, .post]),
        ("v1/rooms/:room", [.get, .delete, .patch]),
        ("v1/rooms/:room/layout", [.put]),
        ("v1/rooms/:room/outputs", [.post]),
        ("v1/rooms/:room/outputs/:output", [.delete]),
        ("v1/rooms/:room/sources", [.get, .post]),
        ("v1/rooms/:room/sources/:user", [.delete]),
        ("v1/rooms/:room/participants", [.post]),
        ("v1/rooms/:room/participants/:user", [.delete, .patch]),
        ("v1/rooms/:room/invites", [.get, .post]),
        ("v1/rooms/:room/invites/:invite", [.delete]),
        ("v1/rooms/:room/events", [.get]),
        ("v1/rooms/:room/snapshot", [.get]),
        ("v1/rooms/:room/hls/:file", [.get]),
        ("v1/rooms/:room/recordings", [.get, .post]),
        ("v1/rooms/:room/recordings/:recording", [.delete]),
        ("v1/rooms/:room/ice-servers", [.get]),
        ("whip/:room", [.post, .options]),
        ("whip/:room/:user", [.delete, .patch]),
        ("whep/:room", [.post]),
        ("whep/:room/:viewer", [.delete]),
    ]
    static let pages: [(path: String, methods: [HTTPRequest.Method])] = [
        ("/", [.get]), ("rooms/:room", [.get]), ("join/:room", [.get]), ("watch/:room", [.get]),
        ("web/:file", [.get]),
    ]
    /// HEAD is left to the router (it answers it for GET routes); CONNECT never names a path. QUERY is the safe
    /// method with a body (draft-ietf-httpbis-safe-method-w-body).
    static let methods: [HTTPRequest.Method] = [
        .get, .post, .put, .patch, .delete, .options, .trace, HTTPRequest.Method("QUERY")!,
    ]

    static func register<Context: RequestContext>(on router: Router<Context>, withPages: Bool) {
        for (path, allowed) in api + (withPages ? pages : []) {
            let allow = allowed.map(\.rawValue).joined(separator: ", ")
            for method in methods where !allowed.contains(method) {
                router.on(RouterPath(path), method: method) { request, _ in
                    var response = APIError.response(
                        status: .methodNotAllowed, code: "method_not_allowed",
                        message: "\(request.method.rawValue) is not allowed here; allowed: \(allow)")
                    response.headers[.allow] = allow
                    return response
                }
            }
        }
    }
}
