import Foundation

/// The users kicked from a room and when (seconds since 1970): a token issued at or before a user's kick no
/// longer admits them, a newer one does. Thread-safe (control calls).
final class KickList: @unchecked Sendable {
    private let lock = NSLock()
    private var kickedAt: [String: Int64] = [:]

    func record(_ userId: String, atSeconds: Int64) { lock.withLock { kickedAt[userId] = atSeconds } }

    /// Whether `userId` with a token issued at `iat` is refused (a token without `iat` never outlives a kick).
    func refuses(_ userId: String, tokenIssuedAt iat: Int64?) -> Bool {
        lock.withLock {
            guard let kicked = kickedAt[userId] else { return false }
            guard let iat else { return true }
            return iat <= kicked
        }
    }
}
