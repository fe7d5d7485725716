import Foundation
import Hummingbird
import HTTPTypes
import Rooms

/// The producer console, the guest join page and the viewer page: plain files of the repository's `web/` directory,
/// served as they are. `/` and `/rooms/{room}` are the console, `/join/{room}` the join page, `/watch/{room}` the
/// viewer page (WHEP), `/web/{file}` their scripts and styles. Pages carry a strict Content-Security-Policy: scripts and styles only from these files, connections only
/// to this server. The token in the page's fragment never reaches the server (fragments are not sent).
struct WebPages: Sendable {
    let directory: URL

    func register<Context: RequestContext>(on router: Router<Context>) {
        router.get("/") { request, _ in try page("console.html", request) }
        router.get("rooms/:room") { request, context in
            _ = try Self.room(context)
            return try page("console.html", request)
        }
        router.get("join/:room") { request, context in
            _ = try Self.room(context)
            return try page("join.html", request)
        }
        router.get("watch/:room") { request, context in
            _ = try Self.room(context)
            return try page("watch.html", request)
        }
        router.get("web/:file") { request, context in
            let name = try context.parameters.require("file")
            guard let type = Self.contentType(of: name) else {
                throw APIError(RoomError.notFound("no file '\(name)' in the web directory"))
            }
            return try file(name, type: type, headers: Self.assetHeaders)
        }
    }

    /// A page for a room name no room can have is 400, as the API's room paths are.
    static func room(_ context: some RequestContext) throws -> String {
        let name = try context.parameters.require("room")
        guard Identifier.isValid(name) else {
            throw APIError.badRequest("invalid_room", "room name must match [A-Za-z0-9_.-]{1,64}")
        }
        return name
    }

    static let assetHeaders: HTTPFields = [
        HTTPField.Name("X-Content-Type-Options")!: "nosniff", .cacheControl: "no-cache",
    ]

    /// What may run on the pages: the server's own scripts and styles, pictures and media from blobs, connections
    /// (fetch, WebSocket) to this server only.
    static func contentSecurityPolicy(host: String?) -> String {
        let sockets = host.map { " ws://\($0) wss://\($0)" } ?? ""
        return "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
            + "media-src 'self' blob:; connect-src 'self'\(sockets); object-src 'none'; base-uri 'none'; "
            + "form-action 'self'; frame-ancestors 'none'"
    }

    private func page(_ name: String, _ request: Request) throws -> Response {
        var headers = Self.assetHeaders
        headers[HTTPField.Name("Content-Security-Policy")!] = Self.contentSecurityPolicy(host: request.head.authority)
        headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        return try file(name, type: "text/html; charset=utf-8", headers: headers)
    }

    private func file(_ name: String, type: String, headers: HTTPFields) throws -> Response {
        // One path component of safe characters: nothing outside the directory can be named.
        guard Identifier.isValid(name), !name.hasPrefix("."),
            let data = FileManager.default.contents(atPath: directory.appendingPathComponent(name).path)
        else {
            // Never the directory's path: it tells a visitor how the server is laid out.
            throw APIError(RoomError.notFound("'\(name.prefix(64))' is not one of the console's files"))
        }
        var headers = headers
        headers[.contentType] = type
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    static func contentType(of name: String) -> String? {
        switch name.split(separator: ".").last {
        case "js": "text/javascript; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "svg": "image/svg+xml"
        case "png": "image/png"
        case "ico": "image/x-icon"
        case "json": "application/json"
        default: nil
        }
    }
}
