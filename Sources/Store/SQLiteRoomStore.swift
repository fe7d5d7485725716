import Foundation
import Rooms

/// The embedded room store: one SQLite file (default `<data_dir>/cohost.db`). Its schema is versioned
/// (`schema_version`); `StoreMigrations.sqlite` lists every step, and opening a file runs the ones it lacks, each in
/// its own transaction.
public final class SQLiteRoomStore: RoomStore, WebhookJournal {
    private let db: SQLiteDatabase
    /// The schema version after opening.
    public let schemaVersion: Int

    public init(path: String) throws(StoreError) {
        let db = try SQLiteDatabase(path: path)
        self.db = db
        try db.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        var version = try Self.version(db)
        for (index, step) in StoreMigrations.sqlite.enumerated() where index + 1 > version {
            try db.transaction { () throws(StoreError) in
                try db.execute(step)
                try db.query("DELETE FROM schema_version")
                try db.query("INSERT INTO schema_version (version) VALUES (?1)", [.integer(Int64(index + 1))])
            }
            version = index + 1
        }
        guard version <= StoreMigrations.sqlite.count else {
            throw StoreError(
                "the store \(path) has schema version \(version), newer than this cohost knows (\(StoreMigrations.sqlite.count)): run a newer cohost"
            )
        }
        schemaVersion = version
    }

    private static func version(_ db: SQLiteDatabase) throws(StoreError) -> Int {
        guard case .integer(let v)? = try db.query("SELECT max(version) FROM schema_version").first?.first else {
            return 0
        }
        return Int(v)
    }

    public func saveRoom(name: String, definition: Data) throws(StoreError) {
        try db.query(
            """
            INSERT INTO rooms (name, definition, updated_at) VALUES (?1, ?2, ?3)
            ON CONFLICT (name) DO UPDATE SET definition = excluded.definition, updated_at = excluded.updated_at
            """, [.text(name), .text(String(decoding: definition, as: UTF8.self)), .integer(Self.now)])
    }

    public func removeRoom(name: String) throws(StoreError) {
        try db.query("DELETE FROM rooms WHERE name = ?1", [.text(name)])
    }

    public func recordKick(room: String, userId: String, atSeconds: Int64) throws(StoreError) {
        try db.query(
            """
            INSERT INTO kicks (room, user_id, kicked_at) VALUES (?1, ?2, ?3)
            ON CONFLICT (room, user_id) DO UPDATE SET kicked_at = excluded.kicked_at
            """, [.text(room), .text(userId), .integer(atSeconds)])
    }

    public func forgetKicks(before seconds: Int64) throws(StoreError) {
        try db.query("DELETE FROM kicks WHERE kicked_at < ?1", [.integer(seconds)])
    }

    public func load() throws(StoreError) -> StoredRooms {
        var stored = StoredRooms()
        for row in try db.query("SELECT name, definition FROM rooms ORDER BY name") {
            guard case .text(let name) = row[0], case .text(let definition) = row[1] else {
                throw StoreError("a row of the rooms table is not (text, text)")
            }
            stored.rooms.append((name, Data(definition.utf8)))
        }
        for row in try db.query("SELECT room, user_id, kicked_at FROM kicks ORDER BY room, user_id") {
            guard case .text(let room) = row[0], case .text(let user) = row[1], case .integer(let at) = row[2] else {
                throw StoreError("a row of the kicks table is not (text, text, integer)")
            }
            stored.kicks.append(.init(room: room, userId: user, atSeconds: at))
        }
        return stored
    }

    public func recordDelivery(_ delivery: JournaledDelivery) throws(StoreError) {
        try db.query(
            "INSERT OR REPLACE INTO webhook_deliveries (url, id, body, queued_at) VALUES (?1, ?2, ?3, ?4)",
            [.text(delivery.url), .text(delivery.id), .blob(delivery.body), .integer(Self.nowMs)])
    }

    public func removeDelivery(url: String, id: String) throws(StoreError) {
        try db.query("DELETE FROM webhook_deliveries WHERE url = ?1 AND id = ?2", [.text(url), .text(id)])
    }

    public func pendingDeliveries() throws(StoreError) -> [JournaledDelivery] {
        try db.query("SELECT url, id, body FROM webhook_deliveries ORDER BY queued_at, rowid").map {
            row throws(StoreError) in
            guard case .text(let url) = row[0], case .text(let id) = row[1] else {
                throw StoreError("a row of the webhook_deliveries table is not (text, text, blob)")
            }
            guard case .blob(let body) = row[2] else { return JournaledDelivery(url: url, id: id, body: []) }
            return JournaledDelivery(url: url, id: id, body: body)
        }
    }

    private static var now: Int64 { Int64(Date().timeIntervalSince1970) }
    private static var nowMs: Int64 { Int64(Date().timeIntervalSince1970 * 1000) }
}

/// The store's schema, one step per version (version N is the first N steps). Steps are only ever appended.
enum StoreMigrations {
    static let sqlite = [
        """
        CREATE TABLE rooms (
            name TEXT PRIMARY KEY NOT NULL,
            definition TEXT NOT NULL,
            updated_at INTEGER NOT NULL
        );
        CREATE TABLE kicks (
            room TEXT NOT NULL,
            user_id TEXT NOT NULL,
            kicked_at INTEGER NOT NULL,
            PRIMARY KEY (room, user_id)
        );
        """,
        """
        CREATE TABLE webhook_deliveries (
            url TEXT NOT NULL,
            id TEXT NOT NULL,
            body BLOB NOT NULL,
            queued_at INTEGER NOT NULL,
            PRIMARY KEY (url, id)
        );
        """,
    ]
}
