import Foundation
import HTTPTypes
import Logging
import WSClient

/// The events WebSocket of one room (`GET /v1/rooms/{room}/events`): each text message handed on as it arrives.
public enum EventStream {
    /// How the socket ended.
    public enum End: Sendable, Equatable {
        /// `room_closed` came (the server closes every socket after it).
        case roomClosed
        /// The server closed the socket otherwise: its token expired, or the server stopped.
        case closed
    }

    /// Follows the room's events until the socket closes: `onConnected` once it is open, `onEvent` with each
    /// message. Throws `ClientError.unreachable` when no connection was made, and the server's refusal
    /// (`ClientError.refused`) when it declined the upgrade.
    public static func follow(
        server: ServerURL, room: String, token: String, onConnected: @escaping @Sendable () -> Void = {},
        onEvent: @escaping @Sendable (String) -> Void
    ) async throws -> End {
        let path = "/v1/rooms/\(ServerURL.segment(room))/events"
        var configuration = WebSocketClientConfiguration(maxFrameSize: 1 << 20)
        // A header, not `?token=`: a URL ends up in proxies' logs.
        configuration.additionalHeaders = [.authorization: "Bearer \(token)"]
        let state = State()
        do {
            try await WebSocketClient.connect(
                url: server.webSocket(path), configuration: configuration,
                logger: Logger(label: "cohost.events", factory: { _ in SwiftLogNoOpLogHandler() })
            ) { inbound, _, _ in
                state.connected()
                onConnected()
                for try await message in inbound.messages(maxSize: 1 << 20) {
                    guard case .text(let text) = message else { continue }
                    if Self.eventType(text) == "room_closed" { state.sawRoomClosed() }
                    onEvent(text)
                }
            }
        } catch let error as WebSocketClientError where error == .webSocketUpgradeFailed {
            // A refused upgrade is answered like a plain GET: ask again without the upgrade for the error's body.
            _ = try await APIClient(server: server, token: token).send("GET", path)
            throw ClientError.refused(status: 0, code: "upgrade_refused", message: "the server declined the WebSocket")
        } catch {
            // Once the socket was open, however it ends (the server stopping included) is the end of the stream.
            guard state.wasConnected else {
                // NIO's connection errors list every attempt; the usual one reads as the HTTP calls' does.
                let text = "\(error)"
                let reason = text.contains("Connection refused") ? "connection refused" : text
                throw ClientError.unreachable(url: server.base, reason: reason)
            }
        }
        return state.roomClosed ? .roomClosed : .closed
    }

    static func eventType(_ event: String) -> String? {
        ((try? JSONSerialization.jsonObject(with: Data(event.utf8))) as? [String: Any])?["type"] as? String
    }

    /// What the socket's handler saw, read after it returned.
    private final class State: @unchecked Sendable {  // guarded by lock
        private let lock = NSLock()
        private var isConnected = false
        private var closedRoom = false

        func connected() { lock.withLock { isConnected = true } }
        func sawRoomClosed() { lock.withLock { closedRoom = true } }
        var wasConnected: Bool { lock.withLock { isConnected } }
        var roomClosed: Bool { lock.withLock { closedRoom } }
    }
}
