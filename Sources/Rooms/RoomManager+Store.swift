import Foundation

/// The manager's side of the room store: what it saves when (a room's definition after every change, its removal
/// when closed for good, kicks), and bringing rooms back at start. A store that fails is logged and counted; the
/// call that changed the room has already taken effect and is not undone.
extension RoomManager {
    /// Brings back every stored room (created through the same checks as `POST /v1/rooms`, outputs starting at
    /// once) and the kicks. Rooms that can no longer be created (a setting tightened since) are logged and left in
    /// the store. Call once, before serving the API.
    @discardableResult
    public func restore() throws(StoreError) -> (restored: [String], failed: [String]) {
        guard let store else { return ([], []) }
        let stored = try store.load()
        lock.withLock {
            for kick in stored.kicks {
                let list = kicks[kick.room] ?? KickList()
                list.record(kick.userId, atSeconds: kick.atSeconds)
                kicks[kick.room] = list
            }
        }
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
        lock.withLock {
            for kick in stored {
                let list = kicks[kick.room] ?? KickList()
                list.record(kick.userId, atSeconds: kick.atSeconds)
                kicks[kick.room] = list
            }
        }
        return try create(config, failIfExists: true)
    }

    /// Store operations that failed since the start (`cohost_store_errors`).
    public var storeErrors: Int { storeLock.withLock { storeErrorCount } }

    /// Saves the room's current definition, unless it has been closed meanwhile.
    func persist(_ room: Room) {
        guard let store else { return }
        storeLock.withLock {
            guard self.room(room.name) === room else { return }
            let json = RoomDefinition(room.definition).json
            do { try store.saveRoom(name: room.name, definition: json) } catch {
                failed("saving room", room.name, error)
            }
        }
    }

    func unpersist(_ name: String) {
        guard let store else { return }
        storeLock.withLock {
            do { try store.removeRoom(name: name) } catch { failed("removing room", name, error) }
        }
    }

    func persistKick(room: String, userId: String, atSeconds: Int64) {
        guard let store else { return }
        storeLock.withLock {
            do { try store.recordKick(room: room, userId: userId, atSeconds: atSeconds) } catch {
                failed("recording a kick in", room, error)
            }
        }
    }

    /// At most once a minute: the sweep runs every second, and expired kicks need no hurry.
    func forgetStoredKicks(before cutoff: Int64, nowSeconds: Int64) {
        guard let store else { return }
        storeLock.withLock {
            guard nowSeconds - kicksForgottenInStoreAt >= 60 else { return }
            kicksForgottenInStoreAt = nowSeconds
            do { try store.forgetKicks(before: cutoff) } catch { failed("forgetting expired kicks of", "*", error) }
        }
    }

    /// Under `storeLock`.
    private func failed(_ what: String, _ room: String, _ error: any Error) {
        storeErrorCount += 1
        logger.error("room store failed", metadata: ["room": "\(room)", "while": "\(what)", "error": "\(error)"])
    }
}
