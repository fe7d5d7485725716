import Foundation
import HTTPTypes
import Hummingbird
import Rooms

/// The STUN and TURN servers a client should use, with TURN credentials minted for the caller (`ICEServers`):
/// `GET /v1/rooms/{room}/ice-servers` for pages (any token of the room: a WHEP viewer behind a firewall needs a
/// relay too), and `OPTIONS /whip/{room}` with a token for WHIP clients that ask before they offer (RFC 9725 §4.4;
/// a CORS preflight, which carries no token, gets none).
struct ICEServersRoute: TokenCheckedRoute, Sendable {
    let manager: RoomManager
    let keys: APIKeys

    func register<Context: RequestContext>(on router: Router<Context>) {
        router.get("v1/rooms/:room/ice-servers", use: list)
        router.on("whip/:room", method: .options, use: whipOptions)
    }

    struct Body: Encodable {
        let iceServers: [ICEServers.Entry]
        /// When the TURN credentials stop working (Unix seconds).
        let expiresAt: Int64
    }

    func list(_ request: Request, context: some RequestContext) async throws -> Response {
        let name = try roomName(context)
        let caller = try self.caller(request)
        try caller.requireViewer(of: name)
        let expiresAt = iceCredentialExpiry(caller)
        let body = Body(
            iceServers: manager.settings.iceServers.entries(userId: caller.claims.sub, expiresAt: expiresAt),
            expiresAt: expiresAt)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Response(
            status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: try encoder.encode(body))))
    }

    func whipOptions(_ request: Request, context: some RequestContext) async throws -> Response {
        let name = try roomName(context)
        var headers: HTTPFields = [.allow: "POST, OPTIONS"]
        if request.headers[.authorization] != nil {
            let caller = try self.caller(request)
            try caller.requireMember(of: name)
            addICEServerLinks(to: &headers, caller: caller)
            headers[.cacheControl] = "no-store"
        }
        return Response(status: .noContent, headers: headers)
    }
}

extension TokenCheckedRoute {
    /// TURN credentials end with the caller's token, and never later than the longest token lifetime from now.
    func iceCredentialExpiry(_ caller: Caller, now: Int64 = Int64(Date().timeIntervalSince1970)) -> Int64 {
        min(caller.claims.exp, now + manager.settings.maxTokenTTLSeconds)
    }

    /// One `Link: <uri>; rel="ice-server"…` per STUN/TURN URI (RFC 9725 §4.4).
    func addICEServerLinks(to headers: inout HTTPFields, caller: Caller) {
        let values = manager.settings.iceServers.linkValues(
            userId: caller.claims.sub, expiresAt: iceCredentialExpiry(caller))
        for value in values { headers.append(HTTPField(name: .link, value: value)) }
    }
}

extension HTTPField.Name {
    static var link: Self { .init("Link")! }
}
