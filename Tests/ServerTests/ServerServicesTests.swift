import Foundation
import Logging
import NIOConcurrencyHelpers
import Rooms
import ServiceLifecycle
import Testing
import TestSupport
@testable import Server
import CohostAPI

/// The services of `cohost serve` and the order the group stops them in (`ServerServices`).
@Suite(.serialized) struct ServerServicesTests {
    static func audioRoom(_ name: String) throws -> RoomConfigRequest {
        try JSONDecoder().decode(RoomConfigRequest.self, from: Data(#"{"name":"\#(name)","audioOnly":true}"#.utf8))
    }

    /// Records what the services log, in order.
    final class LogRecorder: @unchecked Sendable {
        private let lines = NIOLockedValueBox<[String]>([])
        var stopped: [String] {
            lines.withLockedValue { $0 }.compactMap {
                $0.hasPrefix("service stopped ") ? String($0.dropFirst(16)) : nil
            }
        }
        func append(_ line: String) { lines.withLockedValue { $0.append(line) } }

        var logger: Logger {
            Logger(label: "test") { _ in Handler(recorder: self) }
        }

        struct Handler: LogHandler {
            let recorder: LogRecorder
            var metadata: Logger.Metadata = [:]
            var logLevel: Logger.Level = .info
            subscript(metadataKey key: String) -> Logger.Metadata.Value? {
                get { metadata[key] }
                set { metadata[key] = newValue }
            }
            func log(event: LogEvent) {
                let service = event.metadata?["service"].map { " \($0)" } ?? ""
                recorder.append("\(event.message)\(service)")
            }
        }
    }

    /// Stands for the HTTP app: runs until shut down, and says so.
    struct App: Service {
        let started: NIOLockedValueBox<Bool>
        let logger: Logger
        func run() async throws {
            started.withLockedValue { $0 = true }
            try? await gracefulShutdown()
            logger.info("service stopped", metadata: ["service": "app"])
        }
    }

    /// Stands for a cluster node: counts its stops, and whether the rooms were closed by then.
    final class Cluster: ClusterView, @unchecked Sendable {
        let manager: RoomManager
        let roomsAtStop = NIOLockedValueBox<[Int]>([])
        init(manager: RoomManager) { self.manager = manager }
        var nodeID: String { "n1" }
        var secret: String { "cluster-secret-0123456789abcdef0123" }
        func location(of room: String) -> RoomLocation { .local }
        func relocate(_ room: String) -> RoomLocation { location(of: room) }
        func noteOwner(_ room: String, node: String) {}
        func placement() -> ClusterPeer? { nil }
        func peers() -> [ClusterPeer] { [] }
        func report() throws(StoreError) -> [NodeReport] { [] }
        func stop() {
            let count = manager.allRooms.count
            roomsAtStop.withLockedValue { $0.append(count) }
        }
    }

    @Test func theGroupStopsTheAPIFirstThenTheRoomsThenTheMediaPortAndTheClusterLast() async throws {
        let recorder = LogRecorder()
        let logger = recorder.logger
        let manager = RoomManager(settings: RoomSettings(), logger: logger)
        let room = try manager.createRoom(Self.audioRoom("live"))
        let events = room.events.subscribe()
        let media = MediaEndpoint(manager: manager, host: "127.0.0.1", port: try FreePort.udp(), logger: logger)
        try await media.bind()
        let cluster = Cluster(manager: manager)
        let started = NIOLockedValueBox(false)
        let services = ServerServices(
            cluster: cluster, webhooks: nil, media: media, manager: manager, tls: nil,
            app: App(started: started, logger: logger), logger: logger)
        let group = ServiceGroup(services: services.list, logger: logger)
        async let run: Void = group.run()
        // Generous: the group starts on the cooperative threads, which parallel suites may hold for a while.
        #expect(await eventually(seconds: 60) { started.withLockedValue { $0 } })
        await group.triggerGracefulShutdown()
        try await run
        #expect(recorder.stopped == ["app", "sweep", "rooms", "media", "cluster"])
        #expect(manager.allRooms.isEmpty)
        #expect(cluster.roomsAtStop.withLockedValue { $0 } == [0])
        var closed = false
        for await event in events where event.contains("\"room_closed\"") { closed = true }
        #expect(closed)
    }

    @Test func theSweepServiceClosesAnIdleRoomOnItsOwn() async throws {
        let manager = RoomManager(settings: RoomSettings(emptyRoomTimeoutMs: 300), logger: Logger(label: "test"))
        defer { manager.shutdown() }
        _ = try manager.createRoom(Self.audioRoom("idle"))
        let sweep = PeriodicService("sweep", every: 0.1, queue: "test.sweep", logger: Logger(label: "test")) {
            manager.sweep(nowMs: $0)
        }
        let group = ServiceGroup(services: [sweep], logger: Logger(label: "test"))
        async let run: Void = group.run()
        // Measured, not counted: on a loaded machine a 50 ms sleep can take much longer.
        let start = ContinuousClock.now
        #expect(await eventually(seconds: 60) { manager.room("idle") == nil })
        #expect(ContinuousClock.now - start >= .milliseconds(300))
        await group.triggerGracefulShutdown()
        try await run
    }
}
