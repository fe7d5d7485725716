import Foundation

/// Rooms coming back: from this node's store at start, or from another node's definition at a cluster's takeover.
extension RoomManager {
    /// Brings back every stored room (created through the same checks as `POST /v1/rooms`, outputs starting at
    /// once) and the kicks. Rooms that can no longer be created (a setting tightened since) are logged and left in
    /// the store. Call once, before serving the API.
    @discardableResult
    public func restore() throws(StoreError) -> (restored: [String], failed: [String]) {
        guard let store = persistence?.store else { return ([], []) }
        let stored = try store.load()
        for kick in stored.kicks { kicks.record(room: kick.room, userId: kick.userId, atSeconds: kick.atSeconds) }
        var restored: [String] = []
        var failed: [String] = []
        for (name, definition) in stored.rooms {
            do {
                let config = try RoomDefinition.config(from: definition)
                _ = try create(config, failIfExists: true)
                restored.append(name)
            } catch {
                failed.append(name)
                logger.error("stored room not restored", metadata: ["room": "\(name)", "error": "\(error.message)"])
            }
        }
        if !stored.rooms.isEmpty {
            logger.info(
                "rooms restored from the store",
                metadata: [
                    "restored": "\(restored.count)", "failed": "\(failed.count)", "kicks": "\(stored.kicks.count)",
                ])
        }
        return (restored, failed)
    }

    /// Creates a room taken over from another node from its stored definition, with its kicks (the cluster's
    /// failover; the store row is this node's already).
    @discardableResult
    public func adopt(definition: Data, kicks stored: [StoredRooms.Kick]) throws(RoomError) -> Room {
        let config = try RoomDefinition.config(from: definition)
        for kick in stored { kicks.record(room: kick.room, userId: kick.userId, atSeconds: kick.atSeconds) }
        return try create(config, failIfExists: true)
    }
}
