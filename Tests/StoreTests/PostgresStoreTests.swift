import Foundation
import Logging
import Rooms
import Testing
import TestSupport

@testable import Store

/// The PostgreSQL room store against a real server (a throwaway cluster made by initdb and pg_ctl).
@Suite struct PostgresStoreTests {
    @Test func nodesSaveRestoreAndRemoveOnlyTheirOwnRoomsAndShareKicks() throws {
        let pg = try PostgresServer()
        defer { pg.stop() }
        let a = try PostgresRoomStore(url: pg.url, nodeID: "a")
        let b = try PostgresRoomStore(url: pg.url, nodeID: "b")
        #expect(a.schemaVersion == 2 && b.schemaVersion == 2)
        try a.saveRoom(name: "show", definition: Data(#"{"name":"show"}"#.utf8))
        try a.saveRoom(name: "show", definition: Data(#"{"name":"show","maxParticipants":3}"#.utf8))
        try b.saveRoom(name: "talk", definition: Data(#"{"name":"talk","audioOnly":true}"#.utf8))
        // b does not own "show": its removal leaves a's room alone.
        try b.removeRoom(name: "show")
        try a.recordKick(room: "show", userId: "bob", atSeconds: 2_000)
        try b.recordKick(room: "talk", userId: "eve", atSeconds: 100)
        try a.forgetKicks(before: 150)

        let kicks = [StoredRooms.Kick(room: "show", userId: "bob", atSeconds: 2_000)]
        #expect(
            try a.load()
                == StoredRooms(rooms: [("show", Data(#"{"name":"show","maxParticipants":3}"#.utf8))], kicks: kicks))
        #expect(
            try b.load()
                == StoredRooms(rooms: [("talk", Data(#"{"name":"talk","audioOnly":true}"#.utf8))], kicks: kicks))
        try a.removeRoom(name: "show")
        #expect(try a.load().rooms.isEmpty)
        #expect(try pg.psql("SELECT name || '=' || owner FROM rooms ORDER BY name") == "talk=b\n")

        // Webhook deliveries are each node's own.
        try a.recordDelivery(JournaledDelivery(url: "http://127.0.0.1:9/h", id: "e1", body: Array(#"{"n":1}"#.utf8)))
        try a.recordDelivery(JournaledDelivery(url: "http://127.0.0.1:9/h", id: "e2", body: Array(#"{"n":2}"#.utf8)))
        try b.recordDelivery(JournaledDelivery(url: "http://127.0.0.1:9/h", id: "e3", body: Array(#"{"n":3}"#.utf8)))
        try a.removeDelivery(url: "http://127.0.0.1:9/h", id: "e1")
        #expect(try a.pendingDeliveries().map(\.id) == ["e2"] && b.pendingDeliveries().map(\.id) == ["e3"])
        #expect(try a.pendingDeliveries().first?.body == Array(#"{"n":2}"#.utf8))

        // Opened again, nothing is migrated twice; a newer schema is refused.
        #expect(try PostgresRoomStore(url: pg.url, nodeID: "a").schemaVersion == 2)
        _ = try pg.psql("UPDATE schema_version SET version = 5")
        let newer = #expect(throws: StoreError.self) { try PostgresRoomStore(url: pg.url, nodeID: "a") }
        #expect(
            newer?.description
                == "the PostgreSQL store has schema version 5, newer than this cohost knows (2): run a newer cohost")
    }

    @Test func aManagerOnPostgresHasItsRoomsBackAfterARestart() throws {
        let pg = try PostgresServer()
        defer { pg.stop() }
        do {
            let manager = RoomManager(
                settings: .loopbackOutputs, logger: Logger(label: "test"),
                store: try PostgresRoomStore(url: pg.url, nodeID: "n1"))
            let room = try manager.createRoom(
                JSONDecoder().decode(
                    RoomConfigRequest.self,
                    from: Data(#"{"name":"kept","canvas":{"width":320,"height":180,"fps":5}}"#.utf8)))
            _ = try room.startOutput(url: "rtmp://127.0.0.1:9/live/kept")
            manager.shutdown()
        }
        let manager = RoomManager(
            settings: .loopbackOutputs, logger: Logger(label: "test"),
            store: try PostgresRoomStore(url: pg.url, nodeID: "n1"))
        defer { manager.shutdown() }
        #expect(try manager.restore().restored == ["kept"])
        #expect(manager.room("kept")?.outputs.map(\.url) == ["rtmp://127.0.0.1:9/live/kept"])
    }

    @Test func anUnreachableServerIsRefusedWithLibpqsMessage() throws {
        let port = try FreePort.tcp()
        let error = #expect(throws: StoreError.self) {
            try PostgresRoomStore(url: "postgres://cohost@127.0.0.1:\(port)/postgres?connect_timeout=2", nodeID: "a")
        }
        #expect(error?.description.hasPrefix("cannot connect to PostgreSQL: ") == true)
        #expect(error?.description.contains("Connection refused") == true, "\(String(describing: error))")
    }
}
