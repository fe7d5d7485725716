import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPTypes
import Hummingbird
import NIOCore
import Rooms
import CohostAPI

/// In a cluster, every node answers every call: a call about a room another node owns is sent on to that node and its
/// answer returned as it came (a proxy, not a redirect: browsers drop `Authorization` on a cross-origin redirect, a
/// WHIP resource's URL must stay the one the client was given, and a WebSocket cannot follow one). A new room, and a
/// join that would create one, go to the least-loaded node. `GET /v1/rooms` lists the rooms of every live node.
/// A forwarded call carries `X-Cohost-Forwarded-By`, signed (`ForwardSignature`), and is always answered where it
/// arrives, so nothing loops.
struct ClusterProxy<Context: RequestContext>: RouterMiddleware {
    let cluster: any ClusterView
    let keys: APIKeys
    let maxTokenTTLSeconds: Int64

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        if request.headers[ClusterForwarding.forwardedBy] != nil { return try await next(request, context) }
        // A call without a valid token is refused here by its route: it never costs a store lookup or a forward.
        let path = request.uri.path
        // Players cannot set headers: HLS takes `?token=` (HLSRoute), here too.
        let hls = path.contains("/hls/")
        guard
            let caller = try? Caller.authenticate(
                request, keys: keys, allowQuery: hls, maxLifetime: maxTokenTTLSeconds)
        else {
            return try await next(request, context)
        }
        let segments = Array(path.split(separator: "/", omittingEmptySubsequences: false).dropFirst())
        if path == "/v1/rooms" || path == "/v1/rooms/" {
            // Only a call its route could accept is sent on: creating a room takes an admin token.
            if request.method == .post, caller.claims.admin, let peer = cluster.placement() {
                let body = try await ClusterForwarding.body(of: request)
                let (response, answer) = try await ClusterForwarding.forward(
                    request, body: body, to: peer, via: cluster)
                // Known here at once, before the next heartbeat: the caller's next call may come here.
                if response.status == .created,
                    let name = (try? JSONSerialization.jsonObject(with: answer) as? [String: Any])?["name"] as? String
                {
                    cluster.noteOwner(name, node: peer.id)
                }
                return response
            }
            return try await next(request, context)
        }
        let room: String?
        if segments.count >= 3, segments[0] == "v1", segments[1] == "rooms" {
            room = String(segments[2])
        } else if segments.count >= 2, segments[0] == "whip" || segments[0] == "whep" {
            room = String(segments[1])
        } else {
            room = nil
        }
        // A token for another room is refused here, by the route: nothing about a room is sent on for it.
        guard let room, Identifier.isValid(room), caller.covers(room: room) else {
            return try await next(request, context)
        }
        switch cluster.location(of: room) {
        case .local:
            return try await next(request, context)
        case .absent:
            // A join (or WHIP publish) that may create the room goes where a new room would.
            let join = segments.count == 4 && segments[3] == "participants"
            let whip = segments.count == 2 && segments[0] == "whip"
            if request.method == .post, join || whip, let peer = cluster.placement() {
                let body = try await ClusterForwarding.body(of: request)
                let (response, _) = try await ClusterForwarding.forward(request, body: body, to: peer, via: cluster)
                if response.status == .created { cluster.noteOwner(room, node: peer.id) }
                return response
            }
            return try await next(request, context)
        case .peer(let peer):
            let body = try await ClusterForwarding.body(of: request)
            let (response, _) = try await ClusterForwarding.forward(request, body: body, to: peer, via: cluster)
            // The owner the last heartbeat named no longer holds the room (closed, moved since): once, where the
            // store says it is now.
            guard response.status == .notFound, case .peer(let now) = cluster.relocate(room), now != peer else {
                return response
            }
            return try await ClusterForwarding.forward(request, body: body, to: now, via: cluster).0
        case .unavailable(let node):
            throw APIError(
                status: .serviceUnavailable, code: "room_unavailable",
                message: "room '\(room)' is on node '\(node)', which stopped answering; another node takes it over")
        }
    }
}

/// Sending a call on to a peer node, and what comes back.
enum ClusterForwarding {
    static let forwardedBy = ForwardSignature.node
    /// The largest body sent on: the largest any route takes (a room with its three pictures).
    static let maxBody = RoomRoutes.maxRoomBody

    /// The call's body, read once (it may be sent on twice), up to the largest any route takes.
    static func body(of request: Request) async throws -> Data? {
        let body: ByteBuffer
        do { body = try await request.body.collect(upTo: maxBody) } catch {
            throw APIError(
                status: .contentTooLarge, code: "body_too_large", message: "request body larger than \(maxBody) bytes")
        }
        return body.readableBytes > 0 ? Data(buffer: body) : nil
    }

    /// Sends the call on to `peer`; returns its answer, and the answer's body.
    static func forward(
        _ request: Request, body: Data?, to peer: ClusterPeer, via cluster: any ClusterView
    ) async throws -> (Response, Data) {
        let (status, headers, answer) = try await send(
            method: request.method.rawValue, target: request.uri.description, headers: request.headers, body: body,
            via: cluster, peer: peer)
        let response = Response(
            status: .init(code: status), headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(data: answer)))
        return (response, answer)
    }

    /// The rooms of every live peer (`GET /v1/rooms` with the caller's token); a peer that does not answer is left
    /// out.
    static func roomsOfPeers(_ cluster: any ClusterView, headers: HTTPFields) async -> [[String: Any]] {
        var rooms: [[String: Any]] = []
        for peer in cluster.peers() {
            guard
                let (status, _, answer) = try? await send(
                    method: "GET", target: "/v1/rooms", headers: headers, body: nil, via: cluster, peer: peer),
                status == 200,
                let list = ((try? JSONSerialization.jsonObject(with: answer)) as? [String: Any])?["rooms"]
                    as? [[String: Any]]
            else { continue }
            rooms += list
        }
        return rooms
    }

    /// One HTTP exchange with a peer: the caller's headers but those of this hop, signed as this node's.
    static func send(
        method: String, target: String, headers: HTTPFields, body: Data?, via cluster: any ClusterView,
        peer: ClusterPeer
    ) async throws -> (Int, HTTPFields, Data) {
        guard let url = URL(string: peer.apiURL + target) else {
            throw APIError(
                status: .badGateway, code: "node_unreachable", message: "node '\(peer.id)' has no usable URL")
        }
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: 30)
        request.httpMethod = method
        for field in headers where !hopByHop.contains(field.name.canonicalName) {
            request.addValue(field.value, forHTTPHeaderField: field.name.rawName)
        }
        let signed = ForwardSignature.fields(
            secret: cluster.secret, method: method, target: target, node: cluster.nodeID, body: Array(body ?? Data()))
        for (name, value) in signed { request.setValue(value, forHTTPHeaderField: name.rawName) }
        request.httpBody = body
        let (data, response): (Data, URLResponse)
        do { (data, response) = try await session.data(for: request) } catch {
            throw APIError(
                status: .badGateway, code: "node_unreachable",
                message: "node '\(peer.id)' holds this room but did not answer: \(error.localizedDescription)")
        }
        guard let http = response as? HTTPURLResponse else {
            throw APIError(
                status: .badGateway, code: "node_unreachable", message: "node '\(peer.id)' answered without HTTP")
        }
        var fields = HTTPFields()
        for (key, value) in http.allHeaderFields {
            guard let name = (key as? String).flatMap({ HTTPField.Name($0) }), !hopByHop.contains(name.canonicalName),
                let value = value as? String
            else { continue }
            fields.append(HTTPField(name: name, value: value))
        }
        return (http.statusCode, fields, data)
    }

    /// Headers that belong to one connection, never sent on (RFC 9110 §7.6.1), and the length URLSession sets.
    static let hopByHop: Set<String> = [
        "connection", "host", "content-length", "transfer-encoding", "upgrade", "te", "proxy-authorization",
        "keep-alive", "x-cohost-forwarded-by", "x-cohost-forwarded-at", "x-cohost-forward-signature",
    ]

    /// No cookies or cache: every call carries its own token. Redirects are answered as they come, never followed:
    /// a node's answer cannot send the caller's token on to another address.
    static let session = URLSession(configuration: .ephemeral, delegate: NoRedirects(), delegateQueue: nil)
}

/// `GET /v1/nodes` (an admin token for every room, `*`): the cluster's nodes, their load and the rooms each owns.
struct NodesRoute: Sendable {
    let cluster: (any ClusterView)?
    let manager: RoomManager
    let keys: APIKeys

    func register<Context: RequestContext>(on router: Router<Context>) {
        router.get("v1/nodes") { request, _ -> Response in
            let caller = try Caller.authenticate(
                request, keys: keys, allowQuery: false, maxLifetime: manager.settings.maxTokenTTLSeconds)
            guard caller.claims.admin, caller.claims.room == "*" else {
                throw APIError.forbidden("listing the nodes needs an admin token for every room (room '*')")
            }
            guard let cluster else {
                throw APIError(
                    status: .notFound, code: "not_clustered",
                    message: "this server is not part of a cluster (its store is not PostgreSQL)")
            }
            let nodes: [NodeReport]
            do { nodes = try cluster.report() } catch {
                throw APIError(status: .serviceUnavailable, code: "store_unavailable", message: "\(error)")
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: ResponseBody(
                    byteBuffer: ByteBuffer(data: try encoder.encode(NodeList(node: cluster.nodeID, nodes: nodes)))))
        }
    }
}
