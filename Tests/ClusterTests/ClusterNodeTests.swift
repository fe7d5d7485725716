import Foundation
import Logging
import Rooms
import Synchronization
import Testing
@testable import Cluster

/// `ClusterNode` over a store in memory: the heartbeat, the takeover of a silent node's rooms, the release of rooms
/// another node owns, and the answers the HTTP layer asks for. No PostgreSQL and no timer: the test ticks, and sets
/// the nodes' ages.
@Suite struct ClusterNodeTests {
    /// The tables of a cluster's store, shared by the `View`s of several nodes.
    final class Tables: @unchecked Sendable {
        private let lock = NSLock()
        var nodes: [String: NodeRecord] = [:]
        var rooms: [String: (owner: String, definition: Data)] = [:]
        var kicks: [StoredRooms.Kick] = []
        /// When set, every call fails as a database that went away would.
        var down = false
        /// Owner lookups of one room by name (`owner(of:)`).
        var lookups = 0

        func withLock<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
            lock.lock()
            defer { lock.unlock() }
            if down { throw StoreError("connection refused") }
            return try body()
        }
    }

    /// One node's connection to the shared tables.
    struct View: ClusterStore {
        let tables: Tables
        let nodeID: String

        func heartbeat(
            apiURL: String, mediaAddress: String, rooms: Int, participants: Int, cpu: Double
        ) throws(StoreError) {
            try tables.withLock {
                tables.nodes[nodeID] = NodeRecord(
                    id: nodeID, apiURL: apiURL, mediaAddress: mediaAddress, rooms: rooms, participants: participants,
                    cpu: cpu, ageMs: 0)
            }
        }
        func nodes() throws(StoreError) -> [NodeRecord] {
            try tables.withLock { tables.nodes.values.sorted { $0.id < $1.id } }
        }
        func owners() throws(StoreError) -> [(room: String, owner: String)] {
            try tables.withLock { tables.rooms.map { ($0.key, $0.value.owner) }.sorted { $0.0 < $1.0 } }
        }
        func owner(of room: String) throws(StoreError) -> String? {
            try tables.withLock {
                tables.lookups += 1
                return tables.rooms[room]?.owner
            }
        }
        func takeOver(_ room: String, from formerOwner: String) throws(StoreError) -> Data? {
            try tables.withLock {
                guard let row = tables.rooms[room], row.owner == formerOwner else { return nil }
                tables.rooms[room] = (nodeID, row.definition)
                return row.definition
            }
        }
        func kicks(of room: String) throws(StoreError) -> [StoredRooms.Kick] {
            try tables.withLock { tables.kicks.filter { $0.room == room } }
        }
    }

    static func definition(_ name: String) throws -> Data {
        RoomDefinition(try RoomConfigRequest(name: name).resolve()).json
    }

    static func node(_ id: String, _ tables: Tables, manager: RoomManager) -> ClusterNode {
        ClusterNode(
            store: View(tables: tables, nodeID: id), manager: manager, apiURL: "http://\(id).test:7880",
            mediaAddress: "127.0.0.1:7882", timeoutMs: 5_000, secret: "cluster-secret-0123456789abcdef0123",
            logger: Logger(label: "test"))
    }

    static func silent(_ id: String, rooms: [String], in tables: Tables) throws {
        tables.nodes[id] = NodeRecord(
            id: id, apiURL: "http://\(id).test:7880", mediaAddress: "127.0.0.1:9000", rooms: rooms.count,
            participants: 0, cpu: 0, ageMs: 60_000)
        for room in rooms { tables.rooms[room] = (id, try definition(room)) }
    }

    @Test func aSilentNodesRoomsAreTakenOverWithTheirKicks() throws {
        let tables = Tables()
        try Self.silent("gone", rooms: ["show"], in: tables)
        tables.kicks = [.init(room: "show", userId: "troll", atSeconds: Int64(Date().timeIntervalSince1970))]
        let manager = RoomManager(settings: RoomSettings(), logger: Logger(label: "test"))
        defer { manager.shutdown() }
        let node = Self.node("a", tables, manager: manager)
        node.tick()
        #expect(manager.room("show") != nil)
        #expect(tables.rooms["show"]?.owner == "a" && node.takenOver == 1)
        #expect(manager.isKicked(room: "show", userId: "troll", tokenIssuedAt: 0))
        #expect(node.location(of: "show") == .local)
    }

    @Test func theLiveNodesShareASilentNodesRoomsByNameOrder() throws {
        let tables = Tables()
        try Self.silent("gone", rooms: ["r1", "r2", "r3", "r4"], in: tables)
        let managers = [
            RoomManager(settings: RoomSettings(), logger: Logger(label: "a")),
            RoomManager(settings: RoomSettings(), logger: Logger(label: "b")),
        ]
        defer { managers.forEach { $0.shutdown() } }
        let nodes = [Self.node("a", tables, manager: managers[0]), Self.node("b", tables, manager: managers[1])]
        // Both heartbeats are in before either looks for orphans, as `start` has it.
        for node in nodes { try node.beat() }
        for node in nodes { node.tick() }
        // Each took its share in one tick, whichever ticked first.
        #expect(managers[0].allRooms.map(\.name) == ["r1", "r3"])
        #expect(managers[1].allRooms.map(\.name) == ["r2", "r4"])
        #expect(tables.rooms.values.map(\.owner).sorted() == ["a", "a", "b", "b"])
    }

    @Test func aRoomTheStoreGivesToAnotherNodeIsReleasedHereAndStaysStored() throws {
        let tables = Tables()
        let manager = RoomManager(settings: RoomSettings(), logger: Logger(label: "test"))
        defer { manager.shutdown() }
        let node = Self.node("a", tables, manager: manager)
        _ = try manager.createRoom(RoomConfigRequest(name: "moved"))
        // Taken over by b while this node was silent.
        tables.rooms["moved"] = ("b", try Self.definition("moved"))
        tables.nodes["b"] = NodeRecord(
            id: "b", apiURL: "http://b.test:7880", mediaAddress: "127.0.0.1:9001", rooms: 1, participants: 0, cpu: 0,
            ageMs: 100)
        node.tick()
        #expect(manager.room("moved") == nil)
        #expect(tables.rooms["moved"]?.owner == "b")
        #expect(node.location(of: "moved") == .peer(ClusterPeer(id: "b", apiURL: "http://b.test:7880")))
    }

    @Test func locationsSayLocalAbsentPeerOrUnavailable() throws {
        let tables = Tables()
        let manager = RoomManager(settings: RoomSettings(), logger: Logger(label: "test"))
        defer { manager.shutdown() }
        try Self.silent("late", rooms: ["stuck"], in: tables)
        tables.nodes["late"]?.ageMs = 6_000
        tables.nodes["b"] = NodeRecord(
            id: "b", apiURL: "http://b.test:7880", mediaAddress: "127.0.0.1:9001", rooms: 1, participants: 0, cpu: 0,
            ageMs: 200)
        tables.rooms["there"] = ("b", try Self.definition("there"))
        let node = Self.node("a", tables, manager: manager)
        _ = try manager.createRoom(RoomConfigRequest(name: "here"))
        // The heartbeat alone: a tick would take "stuck" over, its owner being past the timeout.
        try node.beat()
        #expect(node.location(of: "here") == .local)
        #expect(node.location(of: "nowhere") == .absent)
        #expect(node.location(of: "there") == .peer(ClusterPeer(id: "b", apiURL: "http://b.test:7880")))
        #expect(node.location(of: "stuck") == .unavailable(node: "late"))
        #expect(node.peers() == [ClusterPeer(id: "b", apiURL: "http://b.test:7880")])
    }

    @Test func locationsComeFromTheHeartbeatsSnapshotAndTheStoreIsAskedOnlyAboutRoomsItNamed() throws {
        let tables = Tables()
        let manager = RoomManager(settings: RoomSettings(), logger: Logger(label: "test"))
        defer { manager.shutdown() }
        tables.nodes["b"] = NodeRecord(
            id: "b", apiURL: "http://b.test:7880", mediaAddress: "127.0.0.1:9001", rooms: 1, participants: 0, cpu: 0,
            ageMs: 200)
        tables.nodes["c"] = NodeRecord(
            id: "c", apiURL: "http://c.test:7880", mediaAddress: "127.0.0.1:9002", rooms: 0, participants: 0, cpu: 0,
            ageMs: 200)
        tables.rooms["there"] = ("b", try Self.definition("there"))
        let time = Mutex(100.0)
        let node = ClusterNode(
            store: View(tables: tables, nodeID: "a"), manager: manager, apiURL: "http://a.test:7880",
            mediaAddress: "127.0.0.1:7882", timeoutMs: 5_000, secret: "cluster-secret-0123456789abcdef0123",
            logger: Logger(label: "test"), clock: { time.withLock { $0 } })
        try node.beat()
        // A room the snapshot holds: no lookup.
        for _ in 0..<100 {
            #expect(node.location(of: "there") == .peer(ClusterPeer(id: "b", apiURL: "http://b.test:7880")))
        }
        #expect(try tables.withLock { tables.lookups } == 0)
        // A flood of names nobody holds: the store is asked about the first 20 of the second, no more.
        for i in 0..<1000 { #expect(node.location(of: "made-up-\(i)") == .absent) }
        #expect(try tables.withLock { tables.lookups } == ClusterNode.missLookupsPerSecond)
        // The next second, one created on another node since the heartbeat is found in the store.
        tables.rooms["new"] = ("c", try Self.definition("new"))
        time.withLock { $0 += 1 }
        #expect(node.location(of: "new") == .peer(ClusterPeer(id: "c", apiURL: "http://c.test:7880")))
        // Moved to c since the heartbeat: b says 404, the store is asked once, and again only a second later.
        tables.rooms["there"] = ("c", try Self.definition("there"))
        let before = try tables.withLock { tables.lookups }
        #expect(node.relocate("there") == .peer(ClusterPeer(id: "c", apiURL: "http://c.test:7880")))
        for _ in 0..<100 { _ = node.relocate("there") }
        #expect(try tables.withLock { tables.lookups } == before + 1)
        #expect(node.location(of: "there") == .peer(ClusterPeer(id: "c", apiURL: "http://c.test:7880")))
        // A room a peer just created (a forwarded create answered 201) is known before the next heartbeat.
        node.noteOwner("fresh", node: "c")
        #expect(node.location(of: "fresh") == .peer(ClusterPeer(id: "c", apiURL: "http://c.test:7880")))
    }

    @Test func aNewRoomGoesToTheLeastLoadedLiveNodeAndStaysHereOnATie() throws {
        let tables = Tables()
        let manager = RoomManager(settings: RoomSettings(), logger: Logger(label: "test"))
        defer { manager.shutdown() }
        let node = Self.node("a", tables, manager: manager)
        _ = try manager.createRoom(RoomConfigRequest(name: "mine"))
        for (id, rooms) in [("b", 1), ("c", 0)] {
            tables.nodes[id] = NodeRecord(
                id: id, apiURL: "http://\(id).test:7880", mediaAddress: "127.0.0.1:9001", rooms: rooms,
                participants: 0, cpu: 0, ageMs: 100)
        }
        node.tick()
        #expect(node.placement() == ClusterPeer(id: "c", apiURL: "http://c.test:7880"))
        tables.nodes["c"]?.rooms = 1
        node.tick()
        // b and c each hold one room, as this node does: it keeps the new one.
        #expect(node.placement() == nil)
    }

    @Test func aStoreThatFailsStopsNeitherTheNodeNorItsRooms() throws {
        let tables = Tables()
        let manager = RoomManager(settings: RoomSettings(), logger: Logger(label: "test"))
        defer { manager.shutdown() }
        let node = Self.node("a", tables, manager: manager)
        _ = try manager.createRoom(RoomConfigRequest(name: "kept"))
        tables.down = true
        node.tick()
        #expect(manager.room("kept") != nil)
        #expect(node.location(of: "kept") == .local)
        #expect(throws: StoreError.self) { try node.report() }
        tables.down = false
        node.tick()
        #expect(try node.report().map(\.id) == ["a"])
    }
}
