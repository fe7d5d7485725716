import Foundation
import Hummingbird
import NIOCore
import Rooms
import Layout
import CohostAPI

/// The HTTP API of protocol/openapi.yaml. Handlers parse, authorise and call `RoomManager`; nothing else.
struct RoomRoutes: TokenCheckedRoute, Sendable {
    let manager: RoomManager
    let keys: APIKeys
    /// In a cluster, the room list covers every live node.
    var cluster: (any ClusterView)? = nil
    /// Which pages may open the events socket.
    var origins = WebOrigins()
    static let maxJSONBody = 64 * 1024
    // A browser offer with 16 receive slots is about 50 KB (each Chromium video line lists every codec).
    static let maxSDPBody = 64 * 1024
    /// Room bodies may carry base64 PNGs (background, placeholder, watermark).
    static let maxRoomBody = 3 * RoomImage.maxBase64Bytes + 64 * 1024

    func register<Context: RequestContext>(on router: Router<Context>) {
        let rooms = router.group("v1/rooms")
        rooms.post(use: createRoom)
        rooms.get(use: listRooms)
        rooms.get(":room", use: getRoom)
        rooms.delete(":room", use: closeRoom)
        rooms.patch(":room", use: patchRoom)
        rooms.put(":room/layout", use: putLayout)
        rooms.post(":room/outputs", use: addOutput)
        rooms.delete(":room/outputs/:output", use: removeOutput)
        rooms.post(":room/sources", use: addSource)
        rooms.get(":room/sources", use: listSources)
        rooms.delete(":room/sources/:user", use: removeSource)
        rooms.post(":room/participants", use: join)
        rooms.post(":room/invites", use: invite)
        rooms.get(":room/invites", use: listInvites)
        rooms.delete(":room/invites/:invite", use: revokeInvite)
        rooms.delete(":room/participants/:user", use: leave)
        rooms.patch(":room/participants/:user", use: patchParticipant)
        rooms.get(":room/participants/:user/subscriptions", use: getSubscriptions)
        rooms.put(":room/participants/:user/subscriptions", use: putSubscriptions)
        rooms.get(":room/events", use: eventsWithoutUpgrade)
        rooms.post(":room/recordings", use: startRecording)
        rooms.get(":room/recordings", use: listRecordings)
        rooms.delete(":room/recordings/:recording", use: stopRecording)
    }

    // MARK: rooms

    func createRoom(_ request: Request, context: some RequestContext) async throws -> Response {
        let caller = try self.caller(request)
        // Before the body is read (up to 3 MB of pictures): a participant token never creates a room.
        guard caller.claims.admin else { throw APIError.forbidden("creating a room needs an admin token") }
        let body: RoomConfigRequest = try await decodeJSON(request, context: context, limit: Self.maxRoomBody)
        guard let name = body.name else { throw APIError.badRequest("invalid_room", "name is required") }
        try caller.requireAdmin(of: name)
        let info = try await offload { [manager] in RoomInfo(try manager.createRoom(body)) }
        return try json(info, status: .created, headers: [.location: "/v1/rooms/\(name)"])
    }

    func listRooms(_ request: Request, context: some RequestContext) async throws -> Response {
        let caller = try self.caller(request)
        guard caller.claims.admin else { throw APIError.forbidden("listing rooms needs an admin token") }
        let visible = manager.allRooms.filter { caller.covers(room: $0.name) }
        let list = try await offload { RoomList(rooms: visible.map(RoomInfo.init)) }
        guard let cluster, request.headers[ClusterForwarding.forwardedBy] == nil else { return try json(list) }
        // The other nodes' rooms too, as one list by name.
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var rooms =
            ((try JSONSerialization.jsonObject(with: encoder.encode(list))) as? [String: Any])?["rooms"]
            as? [[String: Any]] ?? []
        rooms += await ClusterForwarding.roomsOfPeers(cluster, headers: request.headers)
        rooms.sort { ($0["name"] as? String ?? "") < ($1["name"] as? String ?? "") }
        let data = try JSONSerialization.data(
            withJSONObject: ["rooms": rooms], options: [.sortedKeys, .withoutEscapingSlashes])
        return Response(
            status: .ok, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(data: data)))
    }

    func getRoom(_ request: Request, context: some RequestContext) async throws -> Response {
        let name = try roomName(context)
        try caller(request).requireAdmin(of: name)
        let room = try existingRoom(name)
        return try json(try await offload { RoomInfo(room) })
    }

    func closeRoom(_ request: Request, context: some RequestContext) async throws -> Response {
        let name = try roomName(context)
        try caller(request).requireAdmin(of: name)
        guard try await offload({ [manager] in manager.closeRoom(name) }) else {
            throw APIError(RoomError.notFound("no room '\(name)'"))
        }
        return Response(status: .noContent)
    }

    /// Changes a running room's anchor and pictures; answers with the room.
    func patchRoom(_ request: Request, context: some RequestContext) async throws -> Response {
        let name = try roomName(context)
        try caller(request).requireAdmin(of: name)
        let patch: RoomPatch = try await decodeJSON(request, context: context, limit: Self.maxRoomBody)
        let room = try existingRoom(name)
        let info = try await offload {
            try room.apply(patch)
            return RoomInfo(room)
        }
        return try json(info)
    }

    func putLayout(_ request: Request, context: some RequestContext) async throws -> Response {
        let name = try roomName(context)
        try caller(request).requireAdmin(of: name)
        let layout: Layout = try await decodeJSON(request, context: context)
        let room = try existingRoom(name)
        try room.applyLayout(layout)
        return try json(room.currentLayout)
    }

    func addOutput(_ request: Request, context: some RequestContext) async throws -> Response {
        let name = try roomName(context)
        try caller(request).requireAdmin(of: name)
        let body: OutputRequest = try await decodeJSON(request, context: context)
        let room = try existingRoom(name)
        let spec = try body.resolve()
        let output = try await offload { try room.startOutput(spec) }
        return try json(output, status: .created, headers: [.location: "/v1/rooms/\(name)/outputs/\(output.id)"])
    }

    func removeOutput(_ request: Request, context: some RequestContext) async throws -> Response {
        let name = try roomName(context)
        try caller(request).requireAdmin(of: name)
        let id = try context.parameters.require("output")
        let room = try existingRoom(name)
        guard try await offload({ room.stopOutput(id: id) }) else {
            throw APIError(RoomError.notFound("no output '\(id)' in room '\(name)'"))
        }
        return Response(status: .noContent)
    }

    // MARK: sources

    func addSource(_ request: Request, context: some RequestContext) async throws -> Response {
        let name = try roomName(context)
        try caller(request).requireAdmin(of: name)
        let body: SourceRequest = try await decodeJSON(request, context: context)
        let info = try await offload { [manager] in try manager.addSource(room: name, body) }
        return try json(
            info, status: .created, headers: [.location: "/v1/rooms/\(name)/sources/\(info.userId)"])
    }

    func listSources(_ request: Request, context: some RequestContext) async throws -> Response {
        let name = try roomName(context)
        try caller(request).requireAdmin(of: name)
        return try json(SourceList(sources: try manager.sources(room: name)))
    }

    func removeSource(_ request: Request, context: some RequestContext) async throws -> Response {
        let name = try roomName(context)
        try caller(request).requireAdmin(of: name)
        let user = try context.parameters.require("user")
        _ = try existingRoom(name)
        guard try await offload({ [manager] in manager.removeSource(room: name, userId: user) }) else {
            throw APIError(RoomError.notFound("no source '\(user)' in room '\(name)'"))
        }
        return Response(status: .noContent)
    }

    // MARK: participants

    /// The token's `name`, else the join's `?name=` (the join page's field); nil: the user id is shown.
    static func displayName(_ request: Request, caller: Caller) throws -> String? {
        if let name = caller.claims.name { return name }
        guard let given = request.uri.queryParameters.get("name") else { return nil }
        guard DisplayName.isValid(given) else { throw APIError.badRequest("invalid_parameter", DisplayName.rule) }
        return given
    }

    func join(_ request: Request, context: some RequestContext) async throws -> Response {
        let name = try roomName(context)
        let caller = try self.caller(request)
        try caller.requireMember(of: name)
        if let type = request.headers[.contentType], !type.lowercased().hasPrefix("application/sdp") {
            throw APIError(
                status: .unsupportedMediaType, code: "unsupported_media",
                message: "the offer must be Content-Type: application/sdp")
        }
        let buffer = try await collect(request, limit: Self.maxSDPBody)
        let offer = String(decoding: buffer.readableBytesView, as: UTF8.self)
        let monitor: Bool
        switch request.uri.queryParameters.get("monitor") {
        case nil, "false": monitor = false
        case "true": monitor = true
        case let other?:
            throw APIError.badRequest("invalid_parameter", "monitor must be true or false, not '\(other.prefix(32))'")
        }
        let answer = try manager.join(
            room: name, userId: caller.claims.sub, tokenIssuedAt: caller.claims.iat,
            isAdmin: caller.claims.admin, monitor: monitor, invite: caller.claims.inv,
            displayName: try Self.displayName(request, caller: caller), offer: offer)
        return Response(
            status: .created,
            headers: [
                .contentType: "application/sdp", .location: "/v1/rooms/\(name)/participants/\(caller.claims.sub)",
            ],
            body: ResponseBody(byteBuffer: ByteBuffer(string: answer)))
    }

    /// A participant token for `userId` in this room, signed with the caller's key, and the join page's link with it
    /// in the fragment: a producer hands out links without the key's secret ever reaching a browser.
    func invite(_ request: Request, context: some RequestContext) async throws -> Response {
        let name = try roomName(context)
        let caller = try self.caller(request)
        try caller.requireAdmin(of: name)
        _ = try existingRoom(name)
        let body: InviteRequest = try await decodeJSON(request, context: context)
        guard Identifier.isValid(body.userId) else {
            throw APIError.badRequest("invalid_user", "userId must match [A-Za-z0-9_.-]{1,64}")
        }
        let ttl = Int64(body.ttlSeconds ?? 3600)
        guard ttl >= 60, ttl <= manager.settings.maxTokenTTLSeconds else {
            throw APIError.badRequest(
                "invalid_ttl", "ttlSeconds must be within 60...\(manager.settings.maxTokenTTLSeconds)")
        }
        if let uses = body.uses, !(1...InviteRequest.maxUses).contains(uses) {
            throw APIError.badRequest("invalid_uses", "uses must be within 1...\(InviteRequest.maxUses)")
        }
        guard let secret = keys.secret(for: caller.claims.iss) else {
            throw APIError.forbidden("the key '\(caller.claims.iss)' of your token is not one of this server's")
        }
        let now = Int64(Date().timeIntervalSince1970)
        let id = manager.invites.issue(
            room: name, userId: body.userId, expiresAt: now + ttl, uses: body.uses, nowSeconds: now)
        let token = RoomToken.mint(
            TokenClaims(
                iss: caller.claims.iss, sub: body.userId, room: name, admin: false, exp: now + ttl, nbf: nil, iat: now,
                inv: id),
            secret: secret)
        let invite = InviteInfo(
            id: id, userId: body.userId, token: token, link: "/join/\(name)#token=\(token)",
            expiresAt: Self.iso8601(now + ttl), usesLeft: body.uses)
        return try json(invite, status: .created, headers: [.location: "/v1/rooms/\(name)/invites/\(id)"])
    }

    /// `GET /v1/rooms/{room}/invites`: the invites that still stand (without their tokens).
    func listInvites(_ request: Request, context: some RequestContext) async throws -> Response {
        let name = try roomName(context)
        try self.caller(request).requireAdmin(of: name)
        _ = try existingRoom(name)
        let now = Int64(Date().timeIntervalSince1970)
        let invites = manager.invites.list(room: name, nowSeconds: now).map {
            InviteInfo(
                id: $0.id, userId: $0.userId, token: nil, link: nil, expiresAt: Self.iso8601($0.expiresAt),
                usesLeft: $0.usesLeft)
        }
        return try json(InviteList(invites: invites))
    }

    /// `DELETE /v1/rooms/{room}/invites/{invite}`: its token opens nothing from now on (a guest already in stays).
    func revokeInvite(_ request: Request, context: some RequestContext) async throws -> Response {
        let name = try roomName(context)
        let id = try context.parameters.require("invite")
        try self.caller(request).requireAdmin(of: name)
        guard manager.invites.revoke(id: id, room: name) else {
            throw APIError(
                status: .notFound, code: "not_found", message: "room '\(name)' has no invite '\(id.prefix(64))'")
        }
        return Response(status: .noContent)
    }

    static func iso8601(_ seconds: Int64) -> String {
        Date(timeIntervalSince1970: TimeInterval(seconds)).formatted(.iso8601)
    }

    func leave(_ request: Request, context: some RequestContext) async throws -> Response {
        let name = try roomName(context)
        let user = try context.parameters.require("user")
        let caller = try self.caller(request)
        try caller.requireMember(of: name)
        let reason: LeaveReason
        if caller.claims.admin {
            reason = caller.claims.sub == user ? .left : .kicked
        } else if caller.claims.sub == user {
            reason = .left
        } else {
            throw APIError.forbidden("only '\(user)' or an admin may remove '\(user)'")
        }
        guard manager.removeParticipant(room: name, userId: user, reason: reason, by: caller.claims.sub) else {
            throw APIError(RoomError.notFound("no participant '\(user)' in room '\(name)'"))
        }
        return Response(status: .noContent)
    }

    /// An admin sets the mix (mute, gain) and the devices; a participant its own camera and microphone only.
    func patchParticipant(_ request: Request, context: some RequestContext) async throws -> Response {
        let (name, user, caller) = try selfOrAdmin(request, context: context, doing: "change")
        let body: ParticipantPatch = try await decodeJSON(request, context: context)
        if !caller.claims.admin, body.muted != nil || body.gain != nil {
            throw APIError.forbidden("muting and gain need an admin token")
        }
        if body.muted != nil || body.gain != nil {
            try manager.setMix(room: name, userId: user, muted: body.muted, gain: body.gain)
        }
        if body.camera != nil || body.microphone != nil {
            try manager.setDevices(room: name, userId: user, camera: body.camera, microphone: body.microphone)
        } else if body.muted == nil && body.gain == nil {
            // Nothing to change: still a 404 for someone absent.
            try manager.setMix(room: name, userId: user, muted: nil, gain: nil)
        }
        return Response(status: .noContent)
    }

    /// What a participant's slots show and its own choices: the participant itself or an admin.
    func getSubscriptions(_ request: Request, context: some RequestContext) async throws -> Response {
        let (name, user, _) = try selfOrAdmin(request, context: context, doing: "see what is sent to")
        return try json(try manager.subscriptions(room: name, userId: user))
    }

    func putSubscriptions(_ request: Request, context: some RequestContext) async throws -> Response {
        let (name, user, _) = try selfOrAdmin(request, context: context, doing: "choose what is sent to")
        let body: SubscriptionsRequest = try await decodeJSON(request, context: context)
        guard body.slots.count <= 64 else {
            throw APIError.badRequest("invalid_subscription", "at most 64 slots may be named")
        }
        return try json(try manager.subscribe(room: name, userId: user, chosen: body.slots))
    }

    /// The room, the participant named in the path and the caller, when the caller is that participant or an admin
    /// of the room (403 saying who may `doing` them otherwise).
    private func selfOrAdmin(
        _ request: Request, context: some RequestContext, doing: String
    ) throws -> (room: String, user: String, caller: Caller) {
        let name = try roomName(context)
        let user = try context.parameters.require("user")
        let caller = try self.caller(request)
        try caller.requireMember(of: name)
        guard caller.claims.admin || caller.claims.sub == user else {
            throw APIError.forbidden("only '\(user)' or an admin may \(doing) '\(user)'")
        }
        return (name, user, caller)
    }

    /// Reached only when the WebSocket upgrade was declined: say why.
    func eventsWithoutUpgrade(_ request: Request, context: some RequestContext) async throws -> Response {
        let name = try roomName(context)
        let origin = request.headers[.origin]
        guard origins.allowsSocket(origin: origin, host: request.head.authority) else {
            throw APIError(
                status: .forbidden, code: "origin_forbidden",
                message:
                    "pages from \(origin ?? "") may not open this server's events: it is not the server's own origin "
                    + "or one of cors_origins")
        }
        let caller = try self.caller(request, allowQuery: true)
        try caller.requireMember(of: name)
        _ = try existingRoom(name)
        // The upgrade was refused for this reason too (EventsSocket): say so instead of "use a WebSocket".
        if !caller.claims.admin,
            manager.isKicked(room: name, userId: caller.claims.sub, tokenIssuedAt: caller.claims.iat)
        {
            throw APIError(
                status: .forbidden, code: "kicked",
                message:
                    "user '\(caller.claims.sub)' was kicked from '\(name)'; a token issued after the kick is needed")
        }
        if let invite = caller.claims.inv, !manager.invites.stands(id: invite, room: name) {
            throw APIError(
                status: .forbidden, code: "invite_revoked",
                message: "this invite was revoked, or this server does not hold it")
        }
        if EventsSocket.open.count(EventsSocket.holder(caller.claims)) >= EventsSocket.maxSocketsPerToken {
            throw APIError(
                status: .tooManyRequests, code: "too_many_sockets",
                message: "this token holds \(EventsSocket.maxSocketsPerToken) event sockets already")
        }
        throw APIError(
            status: .upgradeRequired, code: "websocket_required", message: "connect with a WebSocket upgrade")
    }

    // MARK: helpers

    func existingRoom(_ name: String) throws -> Room {
        guard let room = manager.room(name) else { throw APIError(RoomError.notFound("no room '\(name)'")) }
        return room
    }

    func decodeJSON<T: Decodable>(
        _ request: Request, context: some RequestContext,
        limit: Int = maxJSONBody
    ) async throws -> T {
        let buffer = try await collect(request, limit: limit)
        do { return try JSONDecoder().decode(T.self, from: Data(buffer.readableBytesView)) } catch let error
            as DecodingError
        {
            throw APIError.badRequest("invalid_json", Self.describe(error))
        } catch let error as LayoutError {
            // A layout (the body of PUT …/layout, or a room's "layout") breaking its own rules while decoding:
            // unknown mode or fit, bad region. Its message says which; "malformed JSON body" would hide it.
            throw APIError.badRequest("invalid_layout", error.message)
        } catch {
            throw APIError.badRequest("invalid_json", "malformed JSON body")
        }
    }

    private static func describe(_ error: DecodingError) -> String {
        func path(_ keys: [any CodingKey]) -> String { keys.map(\.stringValue).joined(separator: ".") }
        switch error {
        case let .typeMismatch(_, c), let .valueNotFound(_, c): return "\(path(c.codingPath)): \(c.debugDescription)"
        case let .keyNotFound(key, c): return "\(path(c.codingPath + [key])) is required"
        case let .dataCorrupted(c):
            return c.codingPath.isEmpty ? "malformed JSON body" : "\(path(c.codingPath)): \(c.debugDescription)"
        @unknown default: return "malformed JSON body"
        }
    }

    func json(
        _ value: some Encodable, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]
    ) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var headers = headers
        headers[.contentType] = "application/json"
        return Response(
            status: status, headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: try encoder.encode(value))))
    }
}

private struct ParticipantPatch: Decodable {
    let muted: Bool?
    /// Read as a Double: a valid gain such as 1e-200 does not fit a Float and would fail decoding.
    let gain: Double?
    let camera: Bool?
    let microphone: Bool?
}

/// `PUT …/subscriptions` body.
private struct SubscriptionsRequest: Decodable {
    let slots: [Subscriptions.Slot]
}

/// `POST /v1/rooms/{room}/invites` body.
struct InviteRequest: Decodable {
    static let maxUses = 1000
    var userId: String
    var ttlSeconds: Int?
    /// Joins the invite opens; nil: any number until it expires.
    var uses: Int?
}
