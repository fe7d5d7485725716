import Foundation
import Testing
import Logging
import WSClient
import Rooms
import TestSupport

extension EndToEnd {
    /// The room service through a real `cohost serve`: a kicked participant's own events socket, webhooks
    /// configured on the command line, and an empty room closing by itself.
    @Suite struct RoomServiceTests {
        /// `cohost serve` with extra arguments on free ports; the HTTP port.
        static func startCohost(_ extra: [String]) throws -> (ManagedProcess, Int) {
            var lastError: (any Error)?
            for _ in 0..<5 {
                let http = try FreePort.tcp()
                let rtp = try UDPPortPair.find()
                let process = ManagedProcess(
                    executable: CohostHarness.binary,
                    arguments: [
                        "serve", "--http", "127.0.0.1:\(http)", "--rtp-port", "\(rtp)", "--log-level", "info",
                        "--store", "none",
                    ] + extra, captureOutput: true)
                do {
                    try process.start()
                    try CohostHarness.waitForHealth(port: http, process: process)
                    return (process, http)
                } catch {
                    lastError = error
                    process.terminate()
                }
            }
            throw lastError ?? HarnessError("cohost did not start")
        }

        /// Two keys' secrets (cohost refuses secrets under 32 bytes).
        static let s1 = "s1-0123456789abcdef0123456789abcdef"
        static let s2 = "s2-0123456789abcdef0123456789abcdef"
        /// The webhook secret: no API key's.
        static let hookSecret = "hook-0123456789abcdef0123456789ab"

        static func token(_ key: String, _ secret: String, room: String, user: String, admin: Bool) -> String {
            TestToken.mint(
                key: key, secret: secret, room: room, user: user, admin: admin,
                iat: Int64(Date().timeIntervalSince1970) - 1)
        }

        static func types(_ texts: [String]) -> [String] {
            texts.map { text in
                let json = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
                return [json["type"], json["userId"], json["reason"]].compactMap { $0 as? String }.joined(
                    separator: " ")
            }
        }

        @Test func kickedSocketWebhooksAndIdleClose() async throws {
            let receiver = try WebhookReceiver()
            defer { receiver.stop() }
            let (cohost, port) = try Self.startCohost([
                "--keys", "k1:\(Self.s1),k2:\(Self.s2)", "--webhook-secret", Self.hookSecret, "--webhook-url",
                "http://127.0.0.1:\(receiver.port)/hook", "--webhook-hosts", "127.0.0.1",
                "--empty-room-timeout", "3",
            ])
            defer { cohost.terminate() }
            let base = "http://127.0.0.1:\(port)"
            let admin = Self.token("k1", Self.s1, room: "svc", user: "mod", admin: true)
            let bob = Self.token("k1", Self.s1, room: "svc", user: "bob", admin: false)
            let created = try HTTP.request(
                "POST", base + "/v1/rooms", token: admin, body: Data(#"{"name":"svc","audioOnly":true}"#.utf8))
            #expect(created.0 == 201)

            let bobSocket = SocketLog(url: "ws://127.0.0.1:\(port)/v1/rooms/svc/events?token=\(bob)")
            let adminSocket = SocketLog(url: "ws://127.0.0.1:\(port)/v1/rooms/svc/events?token=\(admin)")
            defer {
                bobSocket.stop()
                adminSocket.stop()
            }
            try await bobSocket.waitUntilConnected()
            try await adminSocket.waitUntilConnected()
            let joined = try HTTP.request(
                "POST", base + "/v1/rooms/svc/participants", token: bob,
                body: Data(CohostHarness.offer(audioSSRC: 4242, videoSSRC: nil).utf8), contentType: "application/sdp")
            #expect(joined.0 == 201)
            let kicked = try HTTP.request("DELETE", base + "/v1/rooms/svc/participants/bob", token: admin)
            #expect(kicked.0 == 204)

            // Bob hears why he left, then his socket closes; the admin's stays open.
            await eventually(seconds: 5) { bobSocket.isClosed }
            #expect(bobSocket.isClosed)
            #expect(
                Self.types(bobSocket.messages) == [
                    "participant_joined bob", "participant_kicked bob", "participant_left bob kicked",
                ])
            #expect(!adminSocket.isClosed)
            // His token from before the kick no longer opens the room's events.
            let again = SocketLog(url: "ws://127.0.0.1:\(port)/v1/rooms/svc/events?token=\(bob)")
            defer { again.stop() }
            await eventually(seconds: 5) { again.isClosed }
            #expect(again.isClosed && !again.wasConnected)

            // Nobody is left: the room closes by itself after 3 s (checked once a second).
            await eventually(seconds: 8) { adminSocket.isClosed }
            #expect(Self.types(adminSocket.messages).suffix(1) == ["room_closed"])
            #expect(try HTTP.request("GET", base + "/v1/rooms/svc", token: admin).0 == 404)

            // Every event reached the webhook, signed with key k2's secret.
            await eventually(seconds: 5) { receiver.requests.count >= 4 }
            let hooks = receiver.requests
            #expect(
                Self.types(hooks.map { String(decoding: $0.body, as: UTF8.self) })
                    == [
                        "participant_joined bob", "participant_kicked bob", "participant_left bob kicked",
                        "room_closed",
                    ])
            for hook in hooks {
                #expect(hook.path == "/hook")
                #expect(hook.headers["content-type"] == "application/json")
                #expect(hook.headers["x-cohost-key"] == nil)
                let signature = hook.headers["x-cohost-signature"] ?? ""
                #expect(WebhookSignature.isValid(signature, body: hook.body, secret: Self.hookSecret))
                // No API key's secret signs a delivery: a receiver learns nothing that mints tokens.
                #expect(!WebhookSignature.isValid(signature, body: hook.body, secret: Self.s1))
                #expect(!WebhookSignature.isValid(signature, body: hook.body, secret: Self.s2))
            }
            #expect(Set(hooks.compactMap { $0.headers["x-cohost-event-id"] }).count == 4)
            // The receiver records a request as it answers; the server counts it once it has read that answer.
            var metrics = ""
            await eventually(seconds: 5) {
                metrics =
                    (try? HTTP.request("GET", base + "/metrics")).map { String(decoding: $0.1, as: UTF8.self) } ?? ""
                return metrics.contains(#"cohost_webhook_deliveries_total{result="ok"} 4"#)
            }
            #expect(metrics.contains(#"cohost_webhook_deliveries_total{result="ok"} 4"#), "\(metrics.prefix(2000))")
        }

        @Test func aWebhookSecretThatIsAnAPIKeysSecretIsRefusedAtStart() throws {
            let process = ManagedProcess(
                executable: CohostHarness.binary,
                arguments: [
                    "serve", "--store", "none", "--http", "127.0.0.1:\(try FreePort.tcp())", "--keys", "k1:\(Self.s1)",
                    "--webhook-secret", Self.s1, "--webhook-url", "http://127.0.0.1:1/hook",
                ], captureOutput: true)
            try process.start()
            defer { process.terminate() }
            #expect(process.waitForExit(timeout: 10) != 0)
            #expect(
                process.output.contains(
                    "--webhook-secret is the secret of API key 'k1': webhooks need a secret of their own"),
                "\(process.output)")
            #expect(!process.output.contains(Self.s1), "the secret is never printed")
        }
    }
}

/// One events WebSocket: what it received, and whether it has closed.
final class SocketLog: @unchecked Sendable {
    private let lock = NSLock()
    private var received: [String] = []
    private var connected = false
    private var closed = false
    private var task: Task<Void, Never>?

    init(url: String) {
        task = Task {
            _ = try? await WebSocketClient.connect(url: url, logger: Logger(label: "events")) { inbound, _, _ in
                self.lock.withLock { self.connected = true }
                for try await message in inbound.messages(maxSize: 1 << 16) {
                    if case .text(let text) = message { self.lock.withLock { self.received.append(text) } }
                }
            }
            self.lock.withLock { self.closed = true }
        }
    }

    var messages: [String] { lock.withLock { received } }
    var isClosed: Bool { lock.withLock { closed } }
    var wasConnected: Bool { lock.withLock { connected } }
    func stop() { task?.cancel() }

    func waitUntilConnected() async throws {
        for _ in 0..<100 where !lock.withLock({ connected }) { try await Task.sleep(for: .milliseconds(50)) }
    }
}
