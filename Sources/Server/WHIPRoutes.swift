import Foundation
import Hummingbird
import Rooms

/// WHIP (RFC 9725): an encoder or browser publishes with one POST of its offer, authorised by a participant
/// token (`Authorization: Bearer`), and stops with a DELETE of the session URL the answer's `Location` gives.
/// The participant is the token's user, exactly as if it had used the join call; the session URL serves a WebRTC
/// participant that joined by the join call too. PATCH restarts ICE (§4.3.2).
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
            invite: caller.claims.inv, displayName: try RoomRoutes.displayName(request, caller: caller), offer: offer)
        var headers: HTTPFields = [
            .contentType: "application/sdp", .location: Self.sessionPath(room: name, user: caller.claims.sub),
        ]
        if let ufrag = manager.iceUfrag(room: name, userId: caller.claims.sub) { headers[.eTag] = Self.etag(ufrag) }
        addICEServerLinks(to: &headers, caller: caller)
        return Response(status: .created, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: answer)))
    }

    /// The room, the session's user and the caller, who must be that user or an admin.
    private func session(
        _ request: Request, _ context: some RequestContext
    ) throws -> (room: String, user: String, caller: Caller) {
        let name = try roomName(context)
        let user = try context.parameters.require("user")
        let caller = try self.caller(request)
        try caller.requireMember(of: name)
        guard caller.claims.sub == user || caller.claims.admin else {
            throw APIError.forbidden("only '\(user)' or an admin may change or end '\(user)''s WHIP session")
        }
        return (name, user, caller)
    }

    func stop(_ request: Request, context: some RequestContext) async throws -> Response {
        let (name, user, caller) = try session(request, context)
        let reason: LeaveReason = caller.claims.sub == user ? .left : .kicked
        guard manager.removeParticipant(room: name, userId: user, reason: reason, by: caller.claims.sub) else {
            throw APIError(RoomError.notFound("no WHIP session of '\(user)' in room '\(name)'"))
        }
        return Response(status: .ok)
    }

    /// Trickle ICE and ICE restart (RFC 9725 §4.3): the session's ETag is Cohost's current ICE ufrag. A fragment
    /// with new `a=ice-ufrag`/`a=ice-pwd` restarts ICE (200 with Cohost's new credentials and candidates, and a new
    /// ETag); one with candidates only is 204: an ICE-lite server checks nothing itself, so it needs none.
    func patch(_ request: Request, context: some RequestContext) async throws -> Response {
        let (name, user, _) = try session(request, context)
        guard let type = request.headers[.contentType],
            type.lowercased().hasPrefix("application/trickle-ice-sdpfrag")
        else {
            throw APIError(
                status: .unsupportedMediaType, code: "unsupported_media",
                message: "a WHIP PATCH must be Content-Type: application/trickle-ice-sdpfrag")
        }
        guard let current = manager.iceUfrag(room: name, userId: user) else {
            throw APIError(RoomError.notFound("no WebRTC session of '\(user)' in room '\(name)'"))
        }
        guard let match = request.headers[.ifMatch] else {
            throw APIError(
                status: .preconditionRequired, code: "if_match_required",
                message: "a WHIP PATCH needs If-Match: the session's ETag, or * for an ICE restart")
        }
        guard match == "*" || match == Self.etag(current) else {
            throw APIError(
                status: .preconditionFailed, code: "etag_mismatch",
                message: "If-Match \(match) is not the session's ETag \(Self.etag(current))")
        }
        let buffer = try await collect(request, limit: RoomRoutes.maxSDPBody)
        let fragment = String(decoding: buffer.readableBytesView, as: UTF8.self)
        let (ufrag, password) = Self.credentials(in: fragment)
        guard let ufrag else { return Response(status: .noContent) }
        guard password != nil else {
            throw APIError.badRequest(
                "invalid_sdp", "an ICE restart needs a=ice-ufrag and a=ice-pwd (4+ and 22+ ice-chars)")
        }
        guard
            let answer = try manager.restartICE(room: name, userId: user, remoteUfrag: ufrag, remotePassword: password)
        else {
            return Response(status: .noContent)
        }
        let fresh = manager.iceUfrag(room: name, userId: user) ?? current
        return Response(
            status: .ok, headers: [.contentType: "application/trickle-ice-sdpfrag", .eTag: Self.etag(fresh)],
            body: ResponseBody(byteBuffer: ByteBuffer(string: answer)))
    }

    static func etag(_ ufrag: String) -> String { "\"\(ufrag)\"" }

    /// `a=ice-ufrag` and `a=ice-pwd` of a fragment, each only when made of ice-chars of a valid length (RFC 8839).
    static func credentials(in fragment: String) -> (ufrag: String?, password: String?) {
        func value(_ name: String, _ lengths: ClosedRange<Int>) -> String? {
            let prefix = "a=\(name):"
            for line in fragment.split(whereSeparator: \.isNewline) where line.hasPrefix(prefix) {
                let value = line.dropFirst(prefix.count)
                let iceChars = value.utf8.allSatisfy { c in
                    (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x2B
                        || c == 0x2F
                }
                return lengths.contains(value.utf8.count) && iceChars ? String(value) : nil
            }
            return nil
        }
        return (value("ice-ufrag", 4...256), value("ice-pwd", 22...256))
    }

    static func sessionPath(room: String, user: String) -> String {
        let allowed = CharacterSet.urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))
        return "/whip/\(room)/\(user.addingPercentEncoding(withAllowedCharacters: allowed) ?? user)"
    }
}
