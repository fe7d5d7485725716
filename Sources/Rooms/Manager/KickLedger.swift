import Foundation

/// Each room name's kicks, kept past the room's life until no token they could refuse is still valid: the longest
/// token lifetime plus twice the skew (a token's own `exp` leeway, and the issuer's clock behind ours). A room
/// closed and created again under the same name remembers its kicks. Its own lock, held for nothing slow.
final class KickLedger: @unchecked Sendable {
    private let lock = NSLock()
    private var lists: [String: KickList] = [:]
    private let maxTokenTTLSeconds: Int64

    init(maxTokenTTLSeconds: Int64) { self.maxTokenTTLSeconds = maxTokenTTLSeconds }

    func record(room: String, userId: String, atSeconds: Int64) {
        let list = lock.withLock { () -> KickList in
            if let list = lists[room] { return list }
            let list = KickList()
            lists[room] = list
            return list
        }
        list.record(userId, atSeconds: atSeconds)
    }

    /// Whether a token issued at `tokenIssuedAt` for `userId` predates that user's kick from `room`.
    func refuses(room: String, userId: String, tokenIssuedAt: Int64?) -> Bool {
        let list = lock.withLock { lists[room] }
        return list?.refuses(userId, tokenIssuedAt: tokenIssuedAt) ?? false
    }

    /// Kicks made before this instant refuse no token that is still valid at `nowSeconds`.
    func cutoff(nowSeconds: Int64) -> Int64 { nowSeconds - maxTokenTTLSeconds - 2 * KickList.skewSeconds }

    /// Drops kicks made before `cutoff`; a list left empty goes too, unless its room is still `open`.
    func forget(before cutoff: Int64, open: Set<String>) {
        lock.withLock {
            for (name, list) in lists {
                list.forget(before: cutoff)
                if list.isEmpty && !open.contains(name) { lists[name] = nil }
            }
        }
    }
}
