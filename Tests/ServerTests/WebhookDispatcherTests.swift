import Foundation
import Testing
import Hummingbird
import Logging
import NIOConcurrencyHelpers
import Publishing
import Rooms
@testable import Server
import ServiceLifecycle
import TestSupport

/// Webhook deliveries to a real local HTTP listener (Hummingbird on a free loopback port).
@Suite(.serialized) struct WebhookDispatcherTests {
    /// What the listener saw, in arrival order.
    final class Received: @unchecked Sendable {
        struct Request: Sendable {
            let signature: String?
            let eventId: String?
            let key: String?
            let contentType: String?
            let body: [UInt8]
        }
        private let lock = NSLock()
        private var requests: [Request] = []
        /// How many of the first requests are answered 500.
        let failFirst: Int
        init(failFirst: Int) { self.failFirst = failFirst }

        /// Records the request; true when it is to be refused.
        func record(_ r: Request) -> Bool {
            lock.withLock {
                requests.append(r)
                return requests.count <= failFirst
            }
        }
        var all: [Request] { lock.withLock { requests } }
    }

    /// Runs a listener answering POST /hook, then `body` with its URL.
    static func withListener(
        failFirst: Int, _ body: @escaping @Sendable (URL, Received) async throws -> Void
    ) async throws {
        let received = Received(failFirst: failFirst)
        let router = Router()
        router.post("hook") { request, _ -> Response in
            let bytes = try await request.body.collect(upTo: 1 << 20)
            func header(_ name: String) -> String? { request.headers.first { $0.name.canonicalName == name }?.value }
            let refuse = received.record(
                .init(
                    signature: header("x-cohost-signature"), eventId: header("x-cohost-event-id"),
                    key: header("x-cohost-key"),
                    contentType: header("content-type"), body: Array(bytes.readableBytesView)))
            return Response(status: refuse ? .internalServerError : .noContent)
        }
        try await withLoopbackServer(router) { port in
            try await body(URL(string: "http://127.0.0.1:\(port)/hook")!, received)
        }
    }

    /// HMAC-SHA256 hex by openssl, independent of the code under test.
    static func opensslHMAC(_ body: [UInt8], secret: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = ["dgst", "-sha256", "-hmac", secret, "-r"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data(body))
        try input.fileHandleForWriting.close()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return String(text.prefix(64))
    }

    @Test func aRefusedDeliveryIsRetriedWithTheSameIdAndSignatureThenTheRestFollowInOrder() async throws {
        try await Self.withListener(failFirst: 1) { url, received in
            let dispatcher = WebhookDispatcher(
                configuration: .init(urls: [url], secret: "s1", destinations: .loopback), logger: Logger(label: "test"))
            defer { dispatcher.stop() }
            // Real room events, through the manager's sinks.
            let manager = RoomManager(
                settings: RoomSettings(eventSinks: [dispatcher]), logger: Logger(label: "test"))
            defer { manager.shutdown() }
            let request = try JSONDecoder().decode(
                RoomConfigRequest.self, from: Data(#"{"name":"hooked","audioOnly":true}"#.utf8))
            try manager.createRoom(request)
            let offer =
                "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 9 RTP/AVP 111\r\na=rtpmap:111 opus/48000/2\r\na=ssrc:6001\r\n"
            _ = try manager.join(room: "hooked", userId: "alice", tokenIssuedAt: nil, offer: offer)
            let started = Date()
            #expect(manager.closeRoom("hooked"))
            // Publishing never waits for the receiver (whose first answer takes the 0.5 s backoff to retry).
            #expect(Date().timeIntervalSince(started) < 0.4)

            await eventually(seconds: 5) { received.all.count >= 4 }
            let all = received.all
            #expect(all.count == 4)
            guard all.count == 4 else { return }
            // The 500 came after ≥ 0.5 s of backoff; then the same event again, byte for byte.
            #expect(
                all[0].eventId == all[1].eventId && all[0].signature == all[1].signature && all[0].body == all[1].body)
            #expect(Set(all[1...].map(\.eventId)).count == 3)
            let types = try all.map { r -> String in
                let json = try JSONSerialization.jsonObject(with: Data(r.body)) as? [String: Any]
                return [json?["type"], json?["reason"]].compactMap { $0 as? String }.joined(separator: " ")
            }
            #expect(
                types == ["participant_joined", "participant_joined", "participant_left room_closed", "room_closed"])
            for r in all {
                #expect(r.contentType == "application/json")
                #expect(r.key == nil, "no API key is named: deliveries are signed with the webhook secret")
                #expect(r.signature == "sha256=" + (try Self.opensslHMAC(r.body, secret: "s1")))
                #expect(r.eventId?.count == 36)  // a UUID
            }
            await eventually(seconds: 5) { dispatcher.pending == 0 }
            #expect(dispatcher.counts == .init(delivered: 3, failed: 0, dropped: 0))
        }
    }

    @Test func theRetryWaitsTheFirstBackoffStep() async throws {
        try await Self.withListener(failFirst: 1) { url, received in
            let dispatcher = WebhookDispatcher(
                configuration: .init(urls: [url], secret: "s1", destinations: .loopback), logger: Logger(label: "test"))
            defer { dispatcher.stop() }
            let started = Date()
            dispatcher.receive(
                eventJSON: #"{"room":"r","time":"2024-05-01T12:00:00.000Z","type":"room_closed"}"#, room: "r")
            await eventually(seconds: 5) { dispatcher.counts.delivered == 1 }
            let elapsed = Date().timeIntervalSince(started)
            #expect(received.all.count == 2)
            #expect(elapsed >= 0.5 && elapsed < 3, "delivered after \(elapsed) s")
        }
    }

    @Test func aReceiversRedirectIsAFailureNotFollowed() async throws {
        let asked = NIOLockedValueBox<[String]>([])
        let router = Router()
        router.post("hook") { request, _ -> Response in
            asked.withLockedValue { $0.append(request.uri.path) }
            return Response(status: .temporaryRedirect, headers: [.location: "/elsewhere"])
        }
        router.post("elsewhere") { request, _ -> Response in
            asked.withLockedValue { $0.append(request.uri.path) }
            return Response(status: .noContent)
        }
        try await withLoopbackServer(router) { port in
            let policy = WebhookRetryPolicy(initialDelayMs: 10, maxDelayMs: 40, giveUpAfterMs: 150)
            let dispatcher = WebhookDispatcher(
                configuration: .init(
                    urls: [URL(string: "http://127.0.0.1:\(port)/hook")!], secret: "s1", retry: policy,
                    destinations: .loopback),
                logger: Logger(label: "test"))
            defer { dispatcher.stop() }
            dispatcher.receive(eventJSON: #"{"room":"r","type":"room_closed"}"#, room: "r")
            await eventually(seconds: 5) { dispatcher.pending == 0 }
            #expect(dispatcher.counts.failed == 1 && dispatcher.counts.delivered == 0)
            let paths = asked.withLockedValue { $0 }
            #expect(!paths.isEmpty && paths.allSatisfy { $0 == "/hook" }, "\(paths)")
        }
    }

    @Test func aReceiverOnAnInternalAddressIsRefusedBeforeAnyConnectionUnlessListed() async throws {
        let asked = NIOLockedValueBox(0)
        let router = Router()
        router.post("hook") { _, _ -> Response in
            asked.withLockedValue { $0 += 1 }
            return Response(status: .noContent)
        }
        try await withLoopbackServer(router) { port in
            let policy = WebhookRetryPolicy(initialDelayMs: 10, maxDelayMs: 40, giveUpAfterMs: 150)
            // No list: loopback is internal. A name resolving there ("localhost") is refused the same way.
            for host in ["127.0.0.1", "localhost"] {
                let refused = WebhookDispatcher(
                    configuration: .init(
                        urls: [URL(string: "http://\(host):\(port)/hook")!], secret: "s1", retry: policy),
                    logger: Logger(label: "test"))
                refused.receive(eventJSON: #"{"room":"r","type":"room_closed"}"#, room: "r")
                await eventually(seconds: 5) { refused.pending == 0 }
                #expect(refused.counts.failed == 1 && refused.counts.delivered == 0, "\(host)")
                refused.stop()
            }
            // A list that names another loopback address refuses this one too.
            let elsewhere = WebhookDispatcher(
                configuration: .init(
                    urls: [URL(string: "http://localhost:\(port)/hook")!], secret: "s1", retry: policy,
                    destinations: try DestinationPolicy(allowing: ["127.0.0.2"], setting: "webhook_hosts")),
                logger: Logger(label: "test"))
            elsewhere.receive(eventJSON: #"{"room":"r","type":"room_closed"}"#, room: "r")
            await eventually(seconds: 5) { elsewhere.pending == 0 }
            #expect(elsewhere.counts.failed == 1)
            elsewhere.stop()
            #expect(asked.withLockedValue { $0 } == 0)
            // Listed, the same receiver gets the event.
            let listed = WebhookDispatcher(
                configuration: .init(
                    urls: [URL(string: "http://localhost:\(port)/hook")!], secret: "s1", retry: policy,
                    destinations: try DestinationPolicy(allowing: ["127.0.0.1"], setting: "webhook_hosts")),
                logger: Logger(label: "test"))
            defer { listed.stop() }
            listed.receive(eventJSON: #"{"room":"r","type":"room_closed"}"#, room: "r")
            await eventually(seconds: 5) { listed.counts.delivered == 1 }
            #expect(listed.counts.delivered == 1 && asked.withLockedValue { $0 } == 1)
        }
    }

    @Test func anUnreachableURLIsGivenUpAndAFullQueueDrops() async throws {
        // Nothing listens on the discard port of loopback: every attempt is a connection error.
        let url = URL(string: "http://127.0.0.1:9/hook")!
        let policy = WebhookRetryPolicy(initialDelayMs: 10, maxDelayMs: 40, giveUpAfterMs: 150)
        let dispatcher = WebhookDispatcher(
            configuration: .init(
                urls: [url], secret: "s1", queueCapacity: 2, retry: policy, destinations: .loopback),
            logger: Logger(label: "test"))
        defer { dispatcher.stop() }
        let started = Date()
        for n in 0..<5 { dispatcher.receive(eventJSON: #"{"n":\#(n)}"#, room: "r") }
        // queued, never delivered inline (each try would take ≥ 10 ms)
        #expect(Date().timeIntervalSince(started) < 0.5)
        #expect(dispatcher.counts.dropped == 3)
        await eventually(seconds: 5) { dispatcher.pending == 0 }
        #expect(dispatcher.counts == .init(delivered: 0, failed: 2, dropped: 3))
        #expect(await dispatcher.drain(timeout: 0.1))
    }
}

extension DestinationPolicy {
    /// Receivers on this machine: where every test here posts.
    static let loopback = try! DestinationPolicy(allowing: ["127.0.0.0/8"], setting: "webhook_hosts")
}
