import Foundation
import Rooms

/// The cluster's tables, read and written by `ClusterNode`: the node registry with heartbeats (the database's clock,
/// so nodes' clocks need not agree), room owners, and the takeover of a silent node's rooms.
extension PostgresRoomStore: ClusterStore {
    /// Registers this node or refreshes its row.
    public func heartbeat(
        apiURL: String, mediaAddress: String, rooms: Int, participants: Int, cpu: Double
    )
        throws(StoreError)
    {
        try db.query(
            """
            INSERT INTO nodes (id, api_url, media_address, rooms, participants, cpu, heartbeat_at)
            VALUES ($1, $2, $3, $4, $5, $6, now())
            ON CONFLICT (id) DO UPDATE SET api_url = excluded.api_url, media_address = excluded.media_address,
                rooms = excluded.rooms, participants = excluded.participants, cpu = excluded.cpu,
                heartbeat_at = excluded.heartbeat_at
            """, [nodeID, apiURL, mediaAddress, "\(rooms)", "\(participants)", "\(cpu)"])
    }

    public func nodes() throws(StoreError) -> [NodeRecord] {
        try db.query(
            """
            SELECT id, api_url, media_address, rooms, participants, cpu,
                   (extract(epoch FROM now() - heartbeat_at) * 1000)::bigint
            FROM nodes ORDER BY id
            """
        ).map { row throws(StoreError) in
            guard let id = row[0], let url = row[1], let media = row[2], let rooms = row[3].flatMap({ Int($0) }),
                let participants = row[4].flatMap({ Int($0) }), let cpu = row[5].flatMap({ Double($0) }),
                let age = row[6].flatMap({ Int($0) })
            else { throw StoreError("a node row does not read") }
            return NodeRecord(
                id: id, apiURL: url, mediaAddress: media, rooms: rooms, participants: participants, cpu: cpu,
                ageMs: age)
        }
    }

    /// Every room and its owner, by name.
    public func owners() throws(StoreError) -> [(room: String, owner: String)] {
        try db.query("SELECT name, owner FROM rooms ORDER BY name").compactMap { row in
            guard let room = row[0], let owner = row[1] else { return nil }
            return (room, owner)
        }
    }

    /// The owner of one room, nil when the store has none by that name.
    public func owner(of room: String) throws(StoreError) -> String? {
        try lookups.query("SELECT owner FROM rooms WHERE name = $1", [room]).first?.first ?? nil
    }

    /// Takes `room` from `formerOwner` (atomic: only one node succeeds); its definition when this node got it.
    public func takeOver(_ room: String, from formerOwner: String) throws(StoreError) -> Data? {
        try db.query(
            "UPDATE rooms SET owner = $1, updated_at = now() WHERE name = $2 AND owner = $3 RETURNING definition",
            [nodeID, room, formerOwner]
        ).first?.first?.map { Data($0.utf8) }
    }

    /// The kicks of one room.
    public func kicks(of room: String) throws(StoreError) -> [StoredRooms.Kick] {
        try kicks().filter { $0.room == room }
    }
}
