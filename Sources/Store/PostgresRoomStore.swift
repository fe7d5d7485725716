import Foundation
import Rooms

/// The room store on PostgreSQL, shared by the nodes of a cluster: each room row names its owner node, so a node
/// saves and restores only its own rooms. The schema is versioned like the SQLite store's; nodes starting together
/// migrate one at a time (an advisory lock).
public final class PostgresRoomStore: RoomStore, WebhookJournal {
    let db: PostgresDatabase
    /// A connection of its own for owner lookups made for requests: however many wait there, the heartbeat's
    /// statements on `db` never queue behind them.
    let lookups: PostgresDatabase
    /// This node's id: the owner written on its rooms.
    public let nodeID: String
    public let schemaVersion: Int
    /// pg_advisory_lock key for migrations (any constant the application owns).
    static let migrationLock = "7391602"

    /// `url` with `sslmode=verify-full` added for a non-loopback host that names no `sslmode` (`PostgresURL`).
    public init(url: String, nodeID: String) throws(StoreError) {
        let db = try PostgresDatabase(url: PostgresURL.withSecureDefault(url))
        self.db = db
        lookups = try PostgresDatabase(url: PostgresURL.withSecureDefault(url))
        self.nodeID = nodeID
        try db.query("SELECT pg_advisory_lock(\(Self.migrationLock))")
        defer { _ = try? db.query("SELECT pg_advisory_unlock(\(Self.migrationLock))") }
        try db.query("CREATE TABLE IF NOT EXISTS schema_version (version integer NOT NULL)")
        let current = try db.query("SELECT coalesce(max(version), 0) FROM schema_version").first?.first
        var version = current.flatMap { $0.flatMap { Int($0) } } ?? 0
        for (index, step) in StoreMigrations.postgres.enumerated() where index + 1 > version {
            try db.transaction { run throws(StoreError) in
                for statement in step { _ = try run(statement, []) }
                _ = try run("DELETE FROM schema_version", [])
                _ = try run("INSERT INTO schema_version (version) VALUES ($1)", ["\(index + 1)"])
            }
            version = index + 1
        }
        guard version <= StoreMigrations.postgres.count else {
            throw StoreError(
                "the PostgreSQL store has schema version \(version), newer than this cohost knows (\(StoreMigrations.postgres.count)): run a newer cohost"
            )
        }
        schemaVersion = version
    }

    /// Writes the definition while this node owns the room (or nobody does): a node that lost the room to another
    /// must not write over the new owner's.
    public func saveRoom(name: String, definition: Data) throws(StoreError) {
        _ = try claimRoom(name: name, definition: definition)
    }

    /// Atomic: the room becomes this node's when no node holds it; true too when it is this node's already.
    public func claimRoom(name: String, definition: Data) throws(StoreError) -> Bool {
        !(try db.query(
            """
            INSERT INTO rooms (name, definition, owner, updated_at) VALUES ($1, $2, $3, now())
            ON CONFLICT (name) DO UPDATE SET definition = excluded.definition, updated_at = excluded.updated_at
                WHERE rooms.owner = excluded.owner
            RETURNING name
            """, [name, String(decoding: definition, as: UTF8.self), nodeID]
        )
        .isEmpty)
    }

    /// Removes the room only while this node owns it: a node that lost a room to another must not delete it.
    public func removeRoom(name: String) throws(StoreError) {
        try db.query("DELETE FROM rooms WHERE name = $1 AND owner = $2", [name, nodeID])
    }

    public func recordKick(room: String, userId: String, atSeconds: Int64) throws(StoreError) {
        try db.query(
            """
            INSERT INTO kicks (room, user_id, kicked_at) VALUES ($1, $2, $3)
            ON CONFLICT (room, user_id) DO UPDATE SET kicked_at = excluded.kicked_at
            """, [room, userId, "\(atSeconds)"])
    }

    public func forgetKicks(before seconds: Int64) throws(StoreError) {
        try db.query("DELETE FROM kicks WHERE kicked_at < $1", ["\(seconds)"])
    }

    /// This node's rooms, and every kick.
    public func load() throws(StoreError) -> StoredRooms {
        var stored = StoredRooms()
        for row in try db.query("SELECT name, definition FROM rooms WHERE owner = $1 ORDER BY name", [nodeID]) {
            guard let name = row[0], let definition = row[1] else { throw StoreError("a room row holds NULL") }
            stored.rooms.append((name, Data(definition.utf8)))
        }
        stored.kicks = try kicks()
        return stored
    }

    /// Deliveries are this node's: its dispatcher sends them (the body as text: events are JSON).
    public func recordDelivery(_ delivery: JournaledDelivery) throws(StoreError) {
        try db.query(
            """
            INSERT INTO webhook_deliveries (node, url, id, body, queued_at) VALUES ($1, $2, $3, $4, clock_timestamp())
            ON CONFLICT (node, url, id) DO NOTHING
            """, [nodeID, delivery.url, delivery.id, String(decoding: delivery.body, as: UTF8.self)])
    }

    public func removeDelivery(url: String, id: String) throws(StoreError) {
        try db.query("DELETE FROM webhook_deliveries WHERE node = $1 AND url = $2 AND id = $3", [nodeID, url, id])
    }

    public func pendingDeliveries() throws(StoreError) -> [JournaledDelivery] {
        try db.query(
            "SELECT url, id, body FROM webhook_deliveries WHERE node = $1 ORDER BY queued_at, id", [nodeID]
        ).map { row throws(StoreError) in
            guard let url = row[0], let id = row[1], let body = row[2] else {
                throw StoreError("a webhook delivery row holds NULL")
            }
            return JournaledDelivery(url: url, id: id, body: Array(body.utf8))
        }
    }

    func kicks() throws(StoreError) -> [StoredRooms.Kick] {
        try db.query("SELECT room, user_id, kicked_at FROM kicks ORDER BY room, user_id").map {
            row throws(StoreError) in
            guard let room = row[0], let user = row[1], let at = row[2].flatMap({ Int64($0) }) else {
                throw StoreError("a kick row holds NULL")
            }
            return .init(room: room, userId: user, atSeconds: at)
        }
    }
}

extension StoreMigrations {
    /// PostgreSQL's steps (each a list of statements run in one transaction).
    static let postgres: [[String]] = [
        [
            """
            CREATE TABLE rooms (
                name text PRIMARY KEY,
                definition text NOT NULL,
                owner text NOT NULL,
                updated_at timestamptz NOT NULL
            )
            """,
            "CREATE INDEX rooms_owner ON rooms (owner)",
            """
            CREATE TABLE kicks (
                room text NOT NULL,
                user_id text NOT NULL,
                kicked_at bigint NOT NULL,
                PRIMARY KEY (room, user_id)
            )
            """,
            """
            CREATE TABLE nodes (
                id text PRIMARY KEY,
                api_url text NOT NULL,
                media_address text NOT NULL,
                rooms integer NOT NULL,
                participants integer NOT NULL,
                cpu double precision NOT NULL,
                heartbeat_at timestamptz NOT NULL
            )
            """,
        ],
        [
            """
            CREATE TABLE webhook_deliveries (
                node text NOT NULL,
                url text NOT NULL,
                id text NOT NULL,
                body text NOT NULL,
                queued_at timestamptz NOT NULL,
                PRIMARY KEY (node, url, id)
            )
            """
        ],
    ]
}
