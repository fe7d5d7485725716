import Foundation
import Hummingbird
import Rooms

/// Who is calling: verified token claims, and the checks each route needs.
struct Caller: Sendable {
    let claims: TokenClaims

    /// The claims of the bearer token (header `Authorization: Bearer …`, or `?token=` where allowed).
    static func authenticate(
        authorization: String?, queryToken: String?, keys: APIKeys, maxLifetime: Int64? = nil,
        now: Int64 = Int64(Date().timeIntervalSince1970)
    ) throws(APIError) -> Caller {
        var token: String?
        if let authorization {
            let parts = authorization.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "bearer" else {
                throw APIError(TokenError.malformed("Authorization header must be 'Bearer <token>'"))
            }
            token = String(parts[1]).trimmingCharacters(in: .whitespaces)
        } else {
            token = queryToken
        }
        guard let token, !token.isEmpty else { throw APIError(TokenError.missing) }
        do {
            return Caller(claims: try RoomToken.verify(token, keys: keys, now: now, maxLifetime: maxLifetime))
        } catch { throw APIError(error) }
    }

    static func authenticate(
        _ request: Request, keys: APIKeys, allowQuery: Bool = false, maxLifetime: Int64? = nil
    ) throws(APIError) -> Caller {
        try authenticate(
            authorization: request.headers[.authorization],
            queryToken: allowQuery ? request.uri.queryParameters.get("token") : nil, keys: keys,
            maxLifetime: maxLifetime)
    }

    func covers(room: String) -> Bool { claims.room == room || (claims.admin && claims.room == "*") }

    /// Any valid token for this room but a viewer's (participant or admin).
    func requireMember(of room: String) throws(APIError) {
        try requireViewer(of: room)
        guard !claims.viewer else { throw .forbidden("a viewer token only plays the room's programme") }
    }

    /// Any valid token for this room, a viewer's too: what playing the programme needs.
    func requireViewer(of room: String) throws(APIError) {
        guard covers(room: room) else { throw .forbidden("this token is for room '\(claims.room)', not '\(room)'") }
    }

    func requireAdmin(of room: String) throws(APIError) {
        try requireMember(of: room)
        guard claims.admin else { throw .forbidden("this call needs an admin token") }
    }
}

/// A route that checks tokens against the server's keys and its longest accepted token lifetime.
protocol TokenCheckedRoute {
    var manager: RoomManager { get }
    var keys: APIKeys { get }
}

extension TokenCheckedRoute {
    /// The verified caller of `request` (`?token=` too when `allowQuery`).
    func caller(_ request: Request, allowQuery: Bool = false) throws(APIError) -> Caller {
        try Caller.authenticate(
            request, keys: keys, allowQuery: allowQuery, maxLifetime: manager.settings.maxTokenTTLSeconds)
    }

    /// The `:room` path parameter, checked.
    func roomName(_ context: some RequestContext) throws -> String {
        let name = try context.parameters.require("room")
        guard Identifier.isValid(name) else {
            throw APIError.badRequest("invalid_room", "room name must match [A-Za-z0-9_.-]{1,64}")
        }
        return name
    }

    /// The body, up to `limit` bytes; a longer one is 413 `body_too_large`.
    func collect(_ request: Request, limit: Int) async throws -> ByteBuffer {
        do { return try await request.body.collect(upTo: limit) } catch {
            throw APIError(
                status: .contentTooLarge, code: "body_too_large", message: "request body larger than \(limit) bytes")
        }
    }
}
