import Foundation

/// The users kicked from a room and when (seconds since 1970). A token issued at or before a user's kick, or up
/// to `skewSeconds` after it, no longer admits them: an issuer whose clock runs behind ours must not let a token
/// minted before the kick look newer than it. The manager keeps the list past the room's life (a closed and
/// recreated room remembers its kicks) until every token that could predate a kick has expired. Thread-safe.
final class KickList: @unchecked Sendable {
    /// Clock skew tolerated between a token's issuer and this server (the tokens' own `exp`/`nbf` leeway).
    static let skewSeconds: Int64 = 60
    private let lock = NSLock()
    private var kickedAt: [String: Int64] = [:]

    func record(_ userId: String, atSeconds: Int64) { lock.withLock { kickedAt[userId] = atSeconds } }

    /// Whether `userId` with a token issued at `iat` is refused (a token without `iat` never outlives a kick).
    func refuses(_ userId: String, tokenIssuedAt iat: Int64?) -> Bool {
        lock.withLock {
            guard let kicked = kickedAt[userId] else { return false }
            guard let iat else { return true }
            return iat <= kicked + Self.skewSeconds
        }
    }

    /// Forgets kicks made before `seconds`: every token issued before them has expired by now.
    func forget(before seconds: Int64) {
        lock.withLock { kickedAt = kickedAt.filter { $0.value >= seconds } }
    }

    var isEmpty: Bool { lock.withLock { kickedAt.isEmpty } }
}
