import Foundation

/// The rooms of this server by name, and since when each has been empty. A name being created is reserved, so the
/// store can be asked about it and the room's encoders opened without holding the lock: a second creation of the
/// same name waits for the first to finish or give up. One condition lock, held for nothing slow.
final class RoomRegistry: @unchecked Sendable {
    enum Reservation {
        /// The name is this caller's to fill (`fill`) or give back (`cancel`).
        case reserved
        case exists(Room)
        /// The server holds `capacity` rooms already.
        case full
    }

    let capacity: Int
    private let condition = NSCondition()
    private var rooms: [String: Room] = [:]
    private var reserved: Set<String> = []
    /// When each room (by identity, so a re-created room starts afresh) was first seen empty by `idle`.
    private var emptySince: [ObjectIdentifier: Int64] = [:]

    init(capacity: Int) { self.capacity = capacity }

    func room(_ name: String) -> Room? { condition.withLock { rooms[name] } }

    /// Every room, by name.
    var all: [Room] { condition.withLock { rooms.values.sorted { $0.name < $1.name } } }

    var names: Set<String> { condition.withLock { Set(rooms.keys) } }

    func reserve(_ name: String) -> Reservation {
        condition.lock()
        defer { condition.unlock() }
        while reserved.contains(name) { condition.wait() }
        if let existing = rooms[name] { return .exists(existing) }
        guard rooms.count + reserved.count < capacity else { return .full }
        reserved.insert(name)
        return .reserved
    }

    func fill(_ room: Room) {
        condition.withLock {
            reserved.remove(room.name)
            rooms[room.name] = room
            condition.broadcast()
        }
    }

    func cancel(_ name: String) {
        condition.withLock {
            reserved.remove(name)
            condition.broadcast()
        }
    }

    /// Takes `name` out if it is (still) `expected`, when one is given.
    func remove(_ name: String, ifStill expected: Room?) -> Room? {
        condition.withLock {
            guard let current = rooms[name], expected.map({ $0 === current }) ?? true else { return nil }
            rooms[name] = nil
            emptySince[ObjectIdentifier(current)] = nil
            return current
        }
    }

    func room(of participant: Participant) -> Room? {
        condition.withLock { rooms.values.first { $0.participant(participant.userId) === participant } }
    }

    /// The rooms found empty by every call since at least `timeoutMs` ago. The emptiness clock of a room starts at
    /// the first call that finds it empty, and stops at one that finds anybody in it.
    func idle(nowMs: Int64, timeoutMs: Int64) -> [Room] {
        condition.withLock {
            var idle: [Room] = []
            // Updated in place (the sweep calls this every second): `remove`, the only way out of `rooms`, drops a
            // room's entry, so every key here is a room still in `rooms`.
            for room in rooms.values {
                let id = ObjectIdentifier(room)
                guard room.participantCount == 0 else {
                    emptySince[id] = nil
                    continue
                }
                let since = emptySince[id] ?? nowMs
                emptySince[id] = since
                if nowMs - since >= timeoutMs { idle.append(room) }
            }
            return idle.sorted { $0.name < $1.name }
        }
    }
}
