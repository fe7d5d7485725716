import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOEmbedded
import Prometheus
import Rooms
@testable import Server
import TestSupport

/// The routes of a real `RoomManager`, called in-process: requests go straight to the router's responder (with
/// every middleware), no socket, no HTTP client.
struct InProcessApp {
    static let keys = APIKeys(["k1": "s1"])

    /// A token signed with `keys`' `k1`.
    static func token(
        room: String, user: String, admin: Bool = false, exp: Int64? = nil, iat: Int64? = nil, secret: String = "s1"
    ) -> String {
        TestToken.mint(key: "k1", secret: secret, room: room, user: user, admin: admin, exp: exp, iat: iat)
    }

    /// A manager with `settings` (its media address 192.0.2.7:40000 unless given), the router of `cohost serve`
    /// over it, and `body` run against both; the manager's rooms are closed afterwards.
    static func with(
        settings: RoomSettings = RoomSettings(publicIP: "192.0.2.7", rtpPort: 40000), corsOrigins: [String] = [],
        webDirectory: String? = nil, _ body: (RouterClient, RoomManager) async throws -> Void
    ) async throws {
        let manager = RoomManager(settings: settings, logger: Logger(label: "test"))
        defer { manager.shutdown() }
        let router = CohostServer.makeRouter(
            manager: manager, keys: keys, registry: PrometheusCollectorRegistry(), corsOrigins: corsOrigins,
            webDirectory: webDirectory)
        try await body(RouterClient(responder: router.buildResponder()), manager)
    }

    /// The `code` of an `{"error":{"code","message"}}` body.
    static func errorCode(_ response: RouterResponse) -> String? {
        struct Body: Decodable {
            struct E: Decodable { let code: String }
            let error: E
        }
        return try? JSONDecoder().decode(Body.self, from: Data(buffer: response.body)).error.code
    }
}

/// What the router answered: status, headers and the whole body.
struct RouterResponse: Sendable {
    var head: HTTPResponse
    var body: ByteBuffer
    var status: HTTPResponse.Status { head.status }
    var headers: HTTPFields { head.headerFields }
}

/// Sends requests to a responder as the server would, with a context on an embedded channel.
struct RouterClient: Sendable {
    let responder: any HTTPResponder<BasicRequestContext>

    @discardableResult
    func execute<T>(
        uri: String, method: HTTPRequest.Method, headers: HTTPFields = [:], body: ByteBuffer? = nil,
        _ check: (RouterResponse) async throws -> T
    ) async throws -> T {
        try await check(execute(uri: uri, method: method, headers: headers, body: body))
    }

    func execute(
        uri: String, method: HTTPRequest.Method, headers: HTTPFields = [:], body: ByteBuffer? = nil
    ) async throws -> RouterResponse {
        var headers = headers
        if let body { headers[.contentLength] = String(body.readableBytes) }
        let request = Request(
            head: HTTPRequest(method: method, scheme: "http", authority: "localhost", path: uri, headerFields: headers),
            body: RequestBody(buffer: body ?? ByteBuffer()))
        let context = BasicRequestContext(
            source: ApplicationRequestContextSource(channel: EmbeddedChannel(), logger: Logger(label: "test")))
        let response: Response
        do { response = try await responder.respond(to: request, context: context) } catch {
            response = Response(status: .internalServerError)
        }
        let collected = Collected()
        try await response.body.write(Collector(into: collected))
        return RouterResponse(head: response.head, body: collected.body)
    }

    /// The body as written; the writer itself is consumed by the write.
    private final class Collected: @unchecked Sendable { var body = ByteBuffer() }

    private struct Collector: ResponseBodyWriter {
        let into: Collected
        func write(_ buffer: ByteBuffer) async throws {
            var buffer = buffer
            into.body.writeBuffer(&buffer)
        }
        consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }
}

/// `InProcessApp.token`, as the suites call it.
func token(
    room: String, user: String, admin: Bool = false, exp: Int64? = nil, iat: Int64? = nil, secret: String = "s1"
) -> String {
    InProcessApp.token(room: room, user: user, admin: admin, exp: exp, iat: iat, secret: secret)
}

/// `InProcessApp.with`, as the suites call it.
func withApp(
    settings: RoomSettings = RoomSettings(publicIP: "192.0.2.7", rtpPort: 40000), cors: [String] = [],
    webDirectory: String? = nil, _ body: (RouterClient, RoomManager) async throws -> Void
) async throws {
    try await InProcessApp.with(settings: settings, corsOrigins: cors, webDirectory: webDirectory, body)
}

func errorCode(_ response: RouterResponse) -> String? { InProcessApp.errorCode(response) }
