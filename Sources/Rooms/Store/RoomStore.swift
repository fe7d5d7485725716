import Foundation

/// Where a server keeps what must outlive its process: each room's definition (as `RoomDefinition` JSON) and each
/// room's kicks. Media and sessions are never stored. Implementations are thread-safe; calls are rare (control
/// calls, not packets) and may block briefly on disk or the network.
public protocol RoomStore: Sendable {
    /// Inserts or replaces the room's definition.
    func saveRoom(name: String, definition: Data) throws(StoreError)
    /// Claims a new room for this server: false when another node of a shared store holds it.
    func claimRoom(name: String, definition: Data) throws(StoreError) -> Bool
    /// Forgets the room (closed for good); its kicks stay until they expire.
    func removeRoom(name: String) throws(StoreError)
    func recordKick(room: String, userId: String, atSeconds: Int64) throws(StoreError)
    /// Forgets kicks made before `seconds` (every token that could predate them has expired).
    func forgetKicks(before seconds: Int64) throws(StoreError)
    /// Everything stored, for a server starting up.
    func load() throws(StoreError) -> StoredRooms
}

extension RoomStore {
    /// A store of one server: every room it creates is its own.
    public func claimRoom(name: String, definition: Data) throws(StoreError) -> Bool {
        try saveRoom(name: name, definition: definition)
        return true
    }
}

/// What a store holds: room definitions by name, and kicks.
public struct StoredRooms: Sendable, Equatable {
    public struct Kick: Sendable, Equatable {
        public var room: String
        public var userId: String
        public var atSeconds: Int64
        public init(room: String, userId: String, atSeconds: Int64) {
            self.room = room
            self.userId = userId
            self.atSeconds = atSeconds
        }
    }
    public var rooms: [(name: String, definition: Data)]
    public var kicks: [Kick]

    public init(rooms: [(name: String, definition: Data)] = [], kicks: [Kick] = []) {
        self.rooms = rooms
        self.kicks = kicks
    }

    public static func == (a: StoredRooms, b: StoredRooms) -> Bool {
        a.kicks == b.kicks && a.rooms.map(\.name) == b.rooms.map(\.name)
            && a.rooms.map(\.definition) == b.rooms.map(\.definition)
    }
}

/// A store that failed: the library's own message.
public struct StoreError: Error, CustomStringConvertible, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
}
