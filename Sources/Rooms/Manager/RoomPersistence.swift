import Foundation
import Logging

/// What outlives the process, written as it changes: a room's definition after every change (the manager installs
/// `save` as each room's definition observer), its removal when closed for good, and kicks. A store that fails is
/// logged and counted (`cohost_store_errors`); the change it was saving has taken effect already and is not undone.
/// `lock` orders a room's saves against its removal; it is the only lock held across the store's I/O, and nothing
/// on a media path takes it.
final class RoomPersistence: @unchecked Sendable {
    let store: any RoomStore
    private let logger: Logger
    private let lock = NSLock()
    private var errorCount = 0
    private var kicksForgottenAt: Int64 = 0

    init(store: any RoomStore, logger: Logger) {
        self.store = store
        self.logger = logger
    }

    /// Store operations that failed since the start.
    var errors: Int { lock.withLock { errorCount } }

    /// Saves the room's current definition, unless `isCurrent` says it has been closed meanwhile.
    func save(_ room: Room, isCurrent: () -> Bool) {
        lock.withLock {
            guard isCurrent() else { return }
            let json = RoomDefinition(room.definition).json
            do { try store.saveRoom(name: room.name, definition: json) } catch {
                failed("saving room", room.name, error)
            }
        }
    }

    func remove(_ name: String) {
        lock.withLock {
            do { try store.removeRoom(name: name) } catch { failed("removing room", name, error) }
        }
    }

    func recordKick(room: String, userId: String, atSeconds: Int64) {
        lock.withLock {
            do { try store.recordKick(room: room, userId: userId, atSeconds: atSeconds) } catch {
                failed("recording a kick in", room, error)
            }
        }
    }

    /// At most once a minute: the sweep runs every second, and expired kicks need no hurry.
    func forgetKicks(before cutoff: Int64, nowSeconds: Int64) {
        lock.withLock {
            guard nowSeconds - kicksForgottenAt >= 60 else { return }
            kicksForgottenAt = nowSeconds
            do { try store.forgetKicks(before: cutoff) } catch { failed("forgetting expired kicks of", "*", error) }
        }
    }

    /// Under `lock`.
    private func failed(_ what: String, _ room: String, _ error: any Error) {
        errorCount += 1
        logger.error("room store failed", metadata: ["room": "\(room)", "while": "\(what)", "error": "\(error)"])
    }
}
