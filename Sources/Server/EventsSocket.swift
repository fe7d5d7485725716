import Foundation
import Hummingbird
import HummingbirdWebSocket
import Rooms
import Logging
import Synchronization

/// `GET /v1/rooms/{room}/events` as a WebSocket: the room's events as JSON text messages.
///
/// The upgrade decision runs before routing, so it authenticates here: the `Authorization` header, or, since
/// browsers cannot set headers on a WebSocket, the subprotocols `cohost.events` and `cohost.token.<token>` (which
/// keep the token out of URLs and logs), or `?token=`. A refused upgrade falls through to the normal router, whose
/// route for this path answers with the JSON error.
enum EventsSocket {
    /// Sockets one token may hold open at once: a leaked token cannot tie up the server's connections.
    static let maxSocketsPerToken = 4
    static let open = SocketCount()

    static func shouldUpgrade(
        _ request: HTTPRequest, manager: RoomManager, keys: APIKeys, cluster: (any ClusterView)? = nil,
        origins: WebOrigins = WebOrigins()
    )
        -> ShouldUpgradeResult<WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>>
    {
        guard let target = request.path, let room = roomName(inPath: target) else { return .dontUpgrade }
        // Declined here, the request reaches the events route, which says why (403 origin_forbidden, host_forbidden).
        guard origins.allowsHost(request.authority),
            origins.allowsSocket(origin: request.headerFields[.origin], host: request.authority)
        else { return .dontUpgrade }
        guard let existing = manager.room(room) else {
            // Another node's room: the socket is relayed from there (EventsRelay).
            // A relayed socket (signed by a node) is answered here or not at all: nothing loops.
            guard let cluster,
                !ForwardSignature.isValid(
                    request.headerFields, secret: cluster.secret, method: "GET", target: target, body: [])
            else { return .dontUpgrade }
            return EventsRelay.upgrade(request, room: room, cluster: cluster, manager: manager, keys: keys)
        }
        let (token, protocolToken) = offeredToken(request, target: target)
        guard
            let caller = try? Caller.authenticate(
                authorization: request.headerFields[.authorization], queryToken: token, keys: keys,
                maxLifetime: manager.settings.maxTokenTTLSeconds),
            caller.covers(room: room), !caller.claims.viewer
        else { return .dontUpgrade }
        // A participant token issued before its user's kick no longer opens the room's events.
        if !caller.claims.admin,
            manager.isKicked(room: room, userId: caller.claims.sub, tokenIssuedAt: caller.claims.iat)
        {
            return .dontUpgrade
        }
        // A revoked invite opens nothing.
        if let invite = caller.claims.inv, !manager.invites.stands(id: invite, room: room) { return .dontUpgrade }
        let holder = Self.holder(caller.claims)
        guard open.take(holder, limit: maxSocketsPerToken) else { return .dontUpgrade }
        let events = existing.events.subscribe()
        let kickedUser = caller.claims.admin ? nil : caller.claims.sub
        let expiresIn = Double(caller.claims.exp) - Date().timeIntervalSince1970
        // A browser closes a socket whose answer names none of the subprotocols it offered.
        let answer: HTTPFields = protocolToken != nil ? [.secWebSocketProtocol: subprotocol] : [:]
        return .upgrade(answer) { inbound, outbound, _ in
            defer { open.release(holder) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                // The token's life is the socket's: it closes when the token expires.
                group.addTask { try await Task.sleep(for: .seconds(max(0, min(expiresIn, 31_536_000)))) }
                // Ends when the client closes; nothing it sends is meaningful.
                group.addTask { for try await _ in inbound {} }
                group.addTask {
                    for await text in events {
                        try await outbound.write(.text(text))
                        // A kicked participant hears why (participant_kicked, then participant_left), then the socket closes.
                        if let kickedUser, endsSubscription(text, for: kickedUser) { return }
                    }
                }
                try await group.next()
                group.cancelAll()
            }
        }
    }

    /// The token the upgrade request offers (subprotocol, else `?token=`), and the subprotocol one when that is how
    /// it came (the answer must then name `cohost.events`).
    static func offeredToken(_ request: HTTPRequest, target: String) -> (token: String?, protocolToken: String?) {
        let query = target.split(separator: "?", maxSplits: 1).dropFirst().first.map(String.init) ?? ""
        let offered = (request.headerFields[.secWebSocketProtocol] ?? "").split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        let protocolToken =
            offered.contains(subprotocol)
            ? offered.first { $0.hasPrefix(tokenPrefix) }.map { String($0.dropFirst(tokenPrefix.count)) } : nil
        let token =
            protocolToken
            ?? query.split(separator: "&").lazy.compactMap { pair -> String? in
                let kv = pair.split(separator: "=", maxSplits: 1)
                return kv.count == 2 && kv[0] == "token" ? String(kv[1]).removingPercentEncoding : nil
            }.first
        return (token, protocolToken)
    }

    /// The subprotocol a browser offers with `cohost.token.<token>`; the answer names it.
    static let subprotocol = "cohost.events"
    static let tokenPrefix = "cohost.token."

    /// Who holds a socket: one token, by its claims.
    static func holder(_ claims: TokenClaims) -> String {
        "\(claims.iss)|\(claims.sub)|\(claims.room)|\(claims.iat ?? 0)|\(claims.exp)"
    }

    /// Open sockets per token (its issuer, subject, room, iat and exp), behind a lock.
    final class SocketCount: Sendable {
        private let counts = Mutex<[String: Int]>([:])

        /// Counts one more socket for `holder`; false (and nothing counted) when it holds `limit` already.
        func take(_ holder: String, limit: Int) -> Bool {
            counts.withLock { counts in
                guard counts[holder, default: 0] < limit else { return false }
                counts[holder, default: 0] += 1
                return true
            }
        }

        func count(_ holder: String) -> Int { counts.withLock { $0[holder, default: 0] } }

        func release(_ holder: String) {
            counts.withLock { counts in
                let left = counts[holder, default: 1] - 1
                counts[holder] = left > 0 ? left : nil
            }
        }
    }

    /// Whether `eventJSON` is the `participant_left` with reason `kicked` of `userId`: the last
    /// event a kicked participant's own socket carries.
    static func endsSubscription(_ eventJSON: String, for userId: String) -> Bool {
        // Cheap pre-check: most events (voice levels, output status) are not departures.
        guard eventJSON.contains(#""participant_left""#) else { return false }
        struct Departure: Decodable {
            let type: String
            let userId: String?
            let reason: String?
        }
        guard let event = try? JSONDecoder().decode(Departure.self, from: Data(eventJSON.utf8)) else { return false }
        return event.type == "participant_left" && event.userId == userId && event.reason == LeaveReason.kicked.rawValue
    }

    /// "/v1/rooms/<room>/events[?…]" → room.
    static func roomName(inPath target: String) -> String? {
        let path = target.split(separator: "?", maxSplits: 1).first ?? ""
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        guard parts.count == 4, parts[0] == "v1", parts[1] == "rooms", parts[3] == "events",
            Identifier.isValid(String(parts[2]))
        else { return nil }
        return String(parts[2])
    }
}
