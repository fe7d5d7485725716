import Foundation

/// The invites this node minted (`POST …/invites`): each one's id (the token's `inv` claim), room, user, expiry and
/// the joins it has left. A token naming an id this ledger does not hold (revoked, or minted before a restart or on
/// a node that no longer owns the room) opens nothing: invites fail closed. Its own lock, held for nothing slow.
public final class InviteLedger: @unchecked Sendable {
    public struct Invite: Sendable, Equatable {
        public var id: String
        public var room: String
        public var userId: String
        public var expiresAt: Int64
        /// Joins left; nil: any number until it expires.
        public var usesLeft: Int?
    }

    private let lock = NSLock()
    private var invites: [String: Invite] = [:]

    public init() {}

    /// Records a new invite and returns its id (16 random bytes, hex).
    public func issue(room: String, userId: String, expiresAt: Int64, uses: Int?, nowSeconds: Int64) -> String {
        var bytes = [UInt8](repeating: 0, count: 16)
        for i in bytes.indices { bytes[i] = UInt8.random(in: 0...255) }
        let id = bytes.map { String(format: "%02x", $0) }.joined()
        lock.withLock {
            invites = invites.filter { $0.value.expiresAt > nowSeconds }
            invites[id] = Invite(id: id, room: room, userId: userId, expiresAt: expiresAt, usesLeft: uses)
        }
        return id
    }

    /// Takes one of the invite's joins for `userId` in `room`; `refund` gives it back when the join fails after.
    func admit(id: String, room: String, userId: String, nowSeconds: Int64) throws(RoomError) {
        lock.lock()
        defer { lock.unlock() }
        guard var invite = invites[id], invite.room == room, invite.userId == userId, invite.expiresAt > nowSeconds
        else {
            throw .forbidden("invite_revoked", "this invite was revoked, or this server does not hold it")
        }
        if let left = invite.usesLeft {
            guard left > 0 else { throw .forbidden("invite_used", "this invite has been used as often as it may") }
            invite.usesLeft = left - 1
            invites[id] = invite
        }
    }

    func refund(id: String) {
        lock.withLock {
            if let left = invites[id]?.usesLeft { invites[id]?.usesLeft = left + 1 }
        }
    }

    /// Whether a token naming `id` for `room` still stands (not revoked, known here).
    public func stands(id: String, room: String) -> Bool {
        lock.withLock { invites[id]?.room == room }
    }

    /// Revokes the invite `id` of `room`; false when there is none.
    public func revoke(id: String, room: String) -> Bool {
        lock.withLock {
            guard invites[id]?.room == room else { return false }
            invites[id] = nil
            return true
        }
    }

    /// The invites of `room` that have not expired.
    public func list(room: String, nowSeconds: Int64) -> [Invite] {
        lock.withLock { invites.values.filter { $0.room == room && $0.expiresAt > nowSeconds } }
            .sorted { $0.id < $1.id }
    }
}
