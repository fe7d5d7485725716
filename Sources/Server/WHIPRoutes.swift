import Foundation
import Hummingbird
import Rooms

/// WHIP (RFC 9725): an encoder or browser publishes with one POST of its offer, authorised by a participant
/// token (`Authorization: Bearer`), and stops with a DELETE of the session URL the answer's `Location` gives.
/// The participant is the token's user, exactly as if it had used the join call. Trickle ICE and ICE restarts
/// by PATCH are not offered: Cohost is ICE-lite and its answer carries every candidate, so PATCH is 405 (§4.3.1).
struct WHIPRoutes: TokenCheckedRoute, Sendable {
    let manager: RoomManager
    let keys: APIKeys

    func register<Context: RequestContext>(on router: Router<Context>) {
        router.post("whip/:room", use: publish)
        router.delete("whip/:room/:user", use: stop)
        router.patch("whip/:room/:user", use: patch)
    }

    func publish(_ request: Request, context: some RequestContext) async throws -> Response {
        let name = try roomName(context)
        let caller = try self.caller(request)
        try caller.requireMember(of: name)
        guard let type = request.headers[.contentType], type.lowercased().hasPrefix("application/sdp") else {
            throw APIError(
                status: .unsupportedMediaType, code: "unsupported_media",
                message: "a WHIP offer must be Content-Type: application/sdp")
        }
        let buffer = try await collect(request, limit: RoomRoutes.maxSDPBody)
        let offer = String(decoding: buffer.readableBytesView, as: UTF8.self)
        let answer = try manager.join(
            room: name, userId: caller.claims.sub, tokenIssuedAt: caller.claims.iat, isAdmin: caller.claims.admin,
            offer: offer)
        return Response(
            status: .created,
            headers: [
                .contentType: "application/sdp", .location: Self.sessionPath(room: name, user: caller.claims.sub),
            ],
            body: ResponseBody(byteBuffer: ByteBuffer(string: answer)))
    }

    func stop(_ request: Request, context: some RequestContext) async throws -> Response {
        let name = try roomName(context)
        let user = try context.parameters.require("user")
        let caller = try self.caller(request)
        try caller.requireMember(of: name)
        guard caller.claims.sub == user || caller.claims.admin else {
            throw APIError.forbidden("only '\(user)' or an admin may end '\(user)''s WHIP session")
        }
        let reason: LeaveReason = caller.claims.sub == user ? .left : .kicked
        guard manager.removeParticipant(room: name, userId: user, reason: reason, by: caller.claims.sub) else {
            throw APIError(RoomError.notFound("no WHIP session of '\(user)' in room '\(name)'"))
        }
        return Response(status: .ok)
    }

    func patch(_ request: Request, context: some RequestContext) async throws -> Response {
        _ = try roomName(context)
        throw APIError(
            status: .methodNotAllowed, code: "trickle_unsupported",
            message:
                "this WHIP server is ICE-lite: its answer holds every candidate, so trickle ICE and ICE restart by PATCH are not taken; POST a new offer instead"
        )
    }

    static func sessionPath(room: String, user: String) -> String {
        let allowed = CharacterSet.urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))
        return "/whip/\(room)/\(user.addingPercentEncoding(withAllowedCharacters: allowed) ?? user)"
    }
}
