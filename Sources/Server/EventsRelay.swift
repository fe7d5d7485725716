import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import Logging
import Rooms
import WSClient

/// The events socket of a room another node of the cluster owns: the caller's token is checked here (as the owner
/// would), then a socket to the owner is opened with it and every message relayed until either side closes.
enum EventsRelay {
    static func upgrade(
        _ request: HTTPRequest, room: String, cluster: any ClusterView, manager: RoomManager, keys: APIKeys
    ) -> ShouldUpgradeResult<WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>> {
        guard let target = request.path else { return .dontUpgrade }
        let (queryToken, protocolToken) = EventsSocket.offeredToken(request, target: target)
        guard
            let caller = try? Caller.authenticate(
                authorization: request.headerFields[.authorization], queryToken: queryToken, keys: keys,
                maxLifetime: manager.settings.maxTokenTTLSeconds),
            caller.covers(room: room), !caller.claims.viewer,
            // Looked up only for a caller the token admits.
            case .peer(let peer) = cluster.location(of: room)
        else { return .dontUpgrade }
        let node = cluster.nodeID
        // The token that passed, sent on as the owner expects it.
        let header = request.headerFields[.authorization].map { String($0.dropFirst("Bearer ".count)) }
        guard let token = header ?? queryToken else { return .dontUpgrade }
        let holder = EventsSocket.holder(caller.claims)
        guard EventsSocket.open.take(holder, limit: EventsSocket.maxSocketsPerToken) else { return .dontUpgrade }
        let answer: HTTPFields = protocolToken != nil ? [.secWebSocketProtocol: EventsSocket.subprotocol] : [:]
        let url =
            peer.apiURL.replacingOccurrences(of: "http://", with: "ws://")
            .replacingOccurrences(of: "https://", with: "wss://") + "/v1/rooms/\(room)/events"
        var configuration = WebSocketClientConfiguration(maxFrameSize: 1 << 20)
        var headers: HTTPFields = [.authorization: "Bearer \(token)"]
        let signed = ForwardSignature.fields(
            secret: cluster.secret, method: "GET", target: "/v1/rooms/\(room)/events", node: node, body: [])
        for (name, value) in signed { headers[name] = value }
        configuration.additionalHeaders = headers
        let upstreamConfiguration = configuration
        return .upgrade(answer) { inbound, outbound, _ in
            defer { EventsSocket.open.release(holder) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                // The client's side ends the relay when it closes; nothing it sends is meaningful.
                group.addTask { for try await _ in inbound {} }
                group.addTask {
                    try await WebSocketClient.connect(
                        url: url, configuration: upstreamConfiguration,
                        logger: Logger(label: "cohost.relay", factory: { _ in SwiftLogNoOpLogHandler() })
                    ) { upstream, _, _ in
                        for try await message in upstream.messages(maxSize: 1 << 20) {
                            if case .text(let text) = message { try await outbound.write(.text(text)) }
                        }
                    }
                }
                try await group.next()
                group.cancelAll()
            }
        }
    }
}
