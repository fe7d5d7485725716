import Foundation
import HTTPTypes
import Hummingbird
import CohostAPI
import Logging
import NIOConcurrencyHelpers
import Prometheus
import Rooms
import ServiceLifecycle
import Testing

@testable import Server

/// The cluster proxy in-process, its peer a real Hummingbird server on loopback: what it sends on and what not.
@Suite(.serialized) struct ClusterProxyTests {
    /// A cluster whose room "far" is on the peer at `url`.
    final class OnePeer: ClusterView, @unchecked Sendable {
        let peer: ClusterPeer
        init(url: String) { peer = ClusterPeer(id: "n2", apiURL: url) }
        var nodeID: String { "n1" }
        var secret: String { "cluster-secret-0123456789abcdef0123" }
        func location(of room: String) -> RoomLocation { room == "far" ? .peer(peer) : .absent }
        func relocate(_ room: String) -> RoomLocation { location(of: room) }
        func noteOwner(_ room: String, node: String) {}
        func placement() -> ClusterPeer? { peer }
        func peers() -> [ClusterPeer] { [peer] }
        func report() throws(StoreError) -> [NodeReport] { [] }
        func stop() {}
    }

    /// The peer: every path it is asked for, in order. `/v1/rooms/far` answers a redirect to `/stolen`.
    static func withPeer(_ body: (String, NIOLockedValueBox<[String]>) async throws -> Void) async throws {
        let asked = NIOLockedValueBox<[String]>([])
        let router = Router()
        router.get("v1/rooms/far") { request, _ -> Response in
            asked.withLockedValue { $0.append(request.uri.path) }
            return Response(status: .found, headers: [.location: "/stolen"])
        }
        router.get("stolen") { request, _ -> Response in
            asked.withLockedValue { $0.append(request.uri.path) }
            return Response(status: .ok)
        }
        try await withLoopbackServer(router) { port in try await body("http://127.0.0.1:\(port)", asked) }
    }

    @Test func aTokenForAnotherRoomIsNotSentOnAndARedirectIsNotFollowed() async throws {
        try await Self.withPeer { url, asked in
            let manager = RoomManager(
                settings: RoomSettings(publicIP: "192.0.2.7", rtpPort: 40000), logger: Logger(label: "test"))
            defer { manager.shutdown() }
            let router = CohostServer.makeRouter(
                manager: manager, keys: InProcessApp.keys, registry: PrometheusCollectorRegistry(),
                cluster: OnePeer(url: url))
            let client = RouterClient(responder: router.buildResponder())
            let other = token(room: "near", user: "ann", admin: true)
            try await client.execute(
                uri: "/v1/rooms/far", method: .get, headers: [.authorization: "Bearer \(other)"]
            ) {
                #expect($0.status == .forbidden)
                #expect(errorCode($0) == "forbidden")
            }
            #expect(asked.withLockedValue { $0 }.isEmpty, "nothing sent on for a token of another room")
            let far = token(room: "far", user: "ann", admin: true)
            try await client.execute(
                uri: "/v1/rooms/far", method: .get, headers: [.authorization: "Bearer \(far)"]
            ) {
                #expect($0.status == .found)
                #expect($0.headers[.location] == "/stolen")
            }
            #expect(asked.withLockedValue { $0 } == ["/v1/rooms/far"], "the redirect came back, not followed")
        }
    }

    @Test func aForwardMarkWithoutTheSignatureIsDroppedAndTheCallGoesWhereAnyClientsWould() async throws {
        let got = NIOLockedValueBox<[HTTPFields]>([])
        let router = Router()
        router.get("v1/rooms/far") { request, _ -> Response in
            got.withLockedValue { $0.append(request.headers) }
            return Response(status: .ok)
        }
        try await withLoopbackServer(router) { port in
            let manager = RoomManager(
                settings: RoomSettings(publicIP: "192.0.2.7", rtpPort: 40000), logger: Logger(label: "test"))
            defer { manager.shutdown() }
            let cluster = OnePeer(url: "http://127.0.0.1:\(port)")
            let node = CohostServer.makeRouter(
                manager: manager, keys: InProcessApp.keys, registry: PrometheusCollectorRegistry(), cluster: cluster)
            let client = RouterClient(responder: node.buildResponder())
            let far = token(room: "far", user: "ann", admin: true)
            // A client that says it was forwarded (to be answered here, where "far" is not) is sent on all the same.
            try await client.execute(
                uri: "/v1/rooms/far", method: .get,
                headers: [
                    .authorization: "Bearer \(far)", ForwardSignature.node: "n2", ForwardSignature.time: "1",
                    ForwardSignature.mac: String(repeating: "0", count: 64),
                ]
            ) { #expect($0.status == .ok) }
            let sent = try #require(got.withLockedValue { $0 }.first)
            // What the peer got is signed by this node, for this call: nothing of the client's mark is left.
            #expect(sent[ForwardSignature.node] == "n1")
            #expect(
                ForwardSignature.isValid(
                    sent, secret: cluster.secret, method: "GET", target: "/v1/rooms/far", body: []))
            // Signed as a node would, the call is answered here (no room "far" on this node), not sent on.
            var signed: HTTPFields = [.authorization: "Bearer \(far)"]
            for (name, value) in ForwardSignature.fields(
                secret: cluster.secret, method: "GET", target: "/v1/rooms/far", node: "n2", body: [])
            {
                signed[name] = value
            }
            try await client.execute(uri: "/v1/rooms/far", method: .get, headers: signed) {
                #expect($0.status == .notFound)
            }
            #expect(got.withLockedValue { $0 }.count == 1)
        }
    }
}
