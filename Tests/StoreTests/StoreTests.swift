import Codecs
import Foundation
import Logging
import Media
import Publishing
import Rooms
import Testing

@testable import Store
import Layout

/// The SQLite room store, a room's stored definition, and a manager that comes back with its rooms.
@Suite struct StoreTests {
    static func temporaryPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("cohost-store-\(UUID().uuidString).db").path
    }

    static func remove(_ path: String) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    static func request(_ json: String) throws -> RoomConfigRequest {
        try JSONDecoder().decode(RoomConfigRequest.self, from: Data(json.utf8))
    }

    /// A 4×2 PNG, base64.
    static func png() throws -> String {
        var picture = VideoFrame(width: 4, height: 2)
        picture.fill(YUVColor(y: 81, u: 90, v: 240))
        return Data(try PNGEncoder.encode(picture)).base64EncodedString()
    }

    @Test func roomsAndKicksAreThereAfterTheFileIsOpenedAgain() throws {
        let path = Self.temporaryPath()
        defer { Self.remove(path) }
        do {
            let store = try SQLiteRoomStore(path: path)
            #expect(store.schemaVersion == 2)
            try store.saveRoom(name: "b", definition: Data(#"{"name":"b"}"#.utf8))
            try store.saveRoom(name: "a", definition: Data(#"{"name":"a"}"#.utf8))
            try store.saveRoom(name: "a", definition: Data(#"{"name":"a","audioOnly":true}"#.utf8))
            try store.saveRoom(name: "gone", definition: Data(#"{"name":"gone"}"#.utf8))
            try store.removeRoom(name: "gone")
            try store.removeRoom(name: "never-there")
            try store.recordKick(room: "a", userId: "bob", atSeconds: 1_000)
            try store.recordKick(room: "a", userId: "bob", atSeconds: 1_500)
            try store.recordKick(room: "gone", userId: "eve", atSeconds: 900)
            try store.recordKick(room: "b", userId: "old", atSeconds: 100)
            try store.forgetKicks(before: 200)
        }
        let reopened = try SQLiteRoomStore(path: path)
        #expect(reopened.schemaVersion == 2)
        #expect(
            try reopened.load()
                == StoredRooms(
                    rooms: [
                        ("a", Data(#"{"name":"a","audioOnly":true}"#.utf8)), ("b", Data(#"{"name":"b"}"#.utf8)),
                    ],
                    kicks: [
                        .init(room: "a", userId: "bob", atSeconds: 1_500),
                        .init(room: "gone", userId: "eve", atSeconds: 900),
                    ]))
    }

    @Test func theDatabaseAndItsWriteAheadLogAreTheServersAlone() throws {
        let path = Self.temporaryPath()
        defer { Self.remove(path) }
        let store = try SQLiteRoomStore(path: path)
        try store.saveRoom(name: "a", definition: Data(#"{"name":"a"}"#.utf8))
        func mode(_ path: String) -> Int? {
            (try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? Int
        }
        #expect(mode(path) == 0o600)
        #expect(mode(path + "-wal") == 0o600)
    }

    @Test func aFileOfTheFirstSchemaIsMigratedWithItsRoomsKept() throws {
        let path = Self.temporaryPath()
        defer { Self.remove(path) }
        do {
            let db = try SQLiteDatabase(path: path)
            try db.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
            try db.execute(StoreMigrations.sqlite[0])
            try db.query("INSERT INTO schema_version (version) VALUES (1)")
            try db.query(
                "INSERT INTO rooms (name, definition, updated_at) VALUES ('old', '{\"name\":\"old\"}', 1)")
        }
        let store = try SQLiteRoomStore(path: path)
        #expect(store.schemaVersion == 2)
        #expect(try store.load().rooms.map(\.name) == ["old"])
        let delivery = JournaledDelivery(url: "http://127.0.0.1:9/hook", id: "e1", body: [0x7B, 0x7D])
        try store.recordDelivery(delivery)
        try store.recordDelivery(JournaledDelivery(url: "http://127.0.0.1:9/hook", id: "e2", body: [0x5B, 0x5D]))
        try store.removeDelivery(url: "http://127.0.0.1:9/hook", id: "e2")
        #expect(try SQLiteRoomStore(path: path).pendingDeliveries() == [delivery])
    }

    @Test func aStoreWrittenByANewerCohostIsRefused() throws {
        let path = Self.temporaryPath()
        defer { Self.remove(path) }
        _ = try SQLiteRoomStore(path: path)
        try SQLiteDatabase(path: path).query("UPDATE schema_version SET version = 7")
        let error = #expect(throws: StoreError.self) { try SQLiteRoomStore(path: path) }
        #expect(
            error?.description
                == "the store \(path) has schema version 7, newer than this cohost knows (2): run a newer cohost")
    }

    @Test func aFileThatIsNotADatabaseIsRefusedWithSQLitesMessage() throws {
        let path = Self.temporaryPath()
        defer { Self.remove(path) }
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: StoreError.self) { try SQLiteRoomStore(path: path) }
        #expect(error?.description.contains("file is not a database") == true, "\(String(describing: error))")
    }

    @Test func aDefinitionComesBackAsTheSameConfiguration() throws {
        let png = try Self.png()
        let config = try Self.request(
            """
            {"name":"show","maxParticipants":5,"canvas":{"width":640,"height":360,"fps":25,"background":"#202040",
             "placeholder":"#101010","holdMs":700,"backgroundImage":"\(png)","placeholderImage":"\(png)"},
             "video":{"bitrate":1200,"keyint":3,"profile":"main","adaptiveBitrate":true,"minBitrate":300,
                      "dynamicFps":true},
             "audio":{"bitrate":96,"channels":1},
             "layout":{"mode":"custom","regions":[{"userId":"ann","x":0,"y":0,"width":320,"height":360,"z":1,
                        "fit":"contain","alpha":0.5}]},
             "outputs":[{"url":"rtmp://127.0.0.1:9/live/show","queueMs":1500,"maxRetries":4,
                         "backoff":{"initialMaxMs":500,"maxMs":5000},"interleave":"strict"},
                        {"url":"rtmp://127.0.0.1:9/live/two"}],
             "statusIntervalMs":1000,"maxIngestBitrate":1800,"anchor":"ann",
             "watermark":{"image":"\(png)","x":10,"y":10,"width":40,"height":20,"opacity":0.7},
             "maxVideoSize":{"width":1280,"height":720},"returnVideo":{"width":320,"height":180,"fps":10,"bitrate":300}}
            """
        ).resolve()
        let again = try RoomDefinition.config(from: RoomDefinition(config).json)
        #expect(again == config)
        // Stored twice, the same bytes (keys sorted): a save that changes nothing writes the same row.
        #expect(RoomDefinition(again).json == RoomDefinition(config).json)

        let voice = try Self.request(#"{"name":"voice","audioOnly":true,"returnVideo":"none"}"#).resolve()
        #expect(try RoomDefinition.config(from: RoomDefinition(voice).json) == voice)
        #expect(!String(decoding: RoomDefinition(voice).json, as: UTF8.self).contains("canvas"))
        // A voice room with a picture keeps its canvas, and so its picture, through a restart.
        let pictured = try Self.request(#"{"name":"cards","audioOnly":true,"canvas":{"width":640,"height":360}}"#)
            .resolve()
        #expect(pictured.voicePicture && pictured.hasPicture)
        let restored = try RoomDefinition.config(from: RoomDefinition(pictured).json)
        #expect(restored == pictured && restored.canvas.width == 640)
        // An audio-only room stored before voice rooms had pictures carried a canvas all the same: it stays without.
        let older = #"{"name":"old","audioOnly":true,"canvas":{"width":1280,"height":720,"fps":30}}"#
        #expect(try !RoomDefinition.config(from: Data(older.utf8)).hasPicture)
        let noView = try Self.request(#"{"name":"v","returnVideo":"none"}"#).resolve()
        #expect(try RoomDefinition.config(from: RoomDefinition(noView).json) == noView)
    }

    @Test func aRestartedManagerHasTheRoomsAsTheyWereAndItsKicks() throws {
        let path = Self.temporaryPath()
        defer { Self.remove(path) }
        let now = Int64(Date().timeIntervalSince1970)
        let offer =
            "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
            + "m=audio 9 RTP/AVP 111\r\na=rtpmap:111 opus/48000/2\r\na=ssrc:7301\r\n"
        let layout = Layout(
            mode: .custom, regions: [Region(userId: "ann", x: 10, y: 20, width: 300, height: 170, z: 2)])
        do {
            let manager = RoomManager(
                settings: .loopbackOutputs, logger: Logger(label: "test"),
                store: try SQLiteRoomStore(path: path))
            let show = try manager.createRoom(
                Self.request(#"{"name":"show","canvas":{"width":640,"height":360,"fps":10}}"#))
            try show.applyLayout(layout)
            _ = try show.startOutput(url: "rtmp://127.0.0.1:9/live/show")
            let extra = try show.startOutput(url: "rtmp://127.0.0.1:9/live/extra")
            #expect(show.stopOutput(id: extra.id))
            try manager.createRoom(Self.request(#"{"name":"closed","audioOnly":true}"#))
            #expect(manager.closeRoom("closed"))
            _ = try manager.join(room: "show", userId: "bob", tokenIssuedAt: now - 10, offer: offer)
            #expect(manager.removeParticipant(room: "show", userId: "bob", reason: .kicked))
            // Shutting down closes the rooms but keeps them stored.
            manager.shutdown()
            #expect(manager.storeErrors == 0)
        }
        let manager = RoomManager(
            settings: .loopbackOutputs, logger: Logger(label: "test"),
            store: try SQLiteRoomStore(path: path))
        defer { manager.shutdown() }
        let restored = try manager.restore()
        #expect(restored.restored == ["show"] && restored.failed.isEmpty)
        let show = try #require(manager.room("show"))
        #expect(show.currentLayout == layout)
        #expect(show.config.canvas.width == 640 && show.config.canvas.fps == 10)
        #expect(show.outputs.map(\.url) == ["rtmp://127.0.0.1:9/live/show"])
        #expect(manager.room("closed") == nil)
        #expect(manager.isKicked(room: "show", userId: "bob", tokenIssuedAt: now - 10))
        #expect(!manager.isKicked(room: "show", userId: "ann", tokenIssuedAt: now - 10))
    }

    @Test func aStoredRoomTheServerNoLongerAcceptsIsLeftInTheStoreAndNamed() throws {
        let path = Self.temporaryPath()
        defer { Self.remove(path) }
        let store = try SQLiteRoomStore(path: path)
        try store.saveRoom(name: "odd", definition: Data(#"{"name":"odd","canvas":{"width":99999}}"#.utf8))
        try store.saveRoom(name: "fine", definition: Data(#"{"name":"fine","audioOnly":true}"#.utf8))
        let manager = RoomManager(
            settings: .loopbackOutputs, logger: Logger(label: "test"), store: store)
        defer { manager.shutdown() }
        let restored = try manager.restore()
        #expect(restored.restored == ["fine"] && restored.failed == ["odd"])
        #expect(try store.load().rooms.map(\.name) == ["fine", "odd"])
    }
}

extension RoomSettings {
    /// Outputs to this machine allowed: the rooms here push to a closed loopback port.
    static let loopbackOutputs = RoomSettings(
        outputRules: OutputRules(destinations: try! DestinationPolicy(allowing: ["127.0.0.1"])))
}
