import Foundation
import Logging
import Testing
@testable import Rooms

/// Joins, kicks and tokens under hostile timing: concurrent joins with one token, clock skew, rooms closed and
/// created again.
@Suite struct SafeRoomRulesTests {
    static func offer(ssrc: Int) -> String { PipAnchorTests.offer(ssrc: ssrc) }

    @Test func concurrentJoinsOfOneUserLeaveOnlyThePresentSessionsSSRCs() throws {
        let manager = RoomManager(settings: RoomSettings(), logger: Logger(label: "test"))
        defer { manager.shutdown() }
        for round in 0..<100 {
            let ssrcs = [20_000 + 2 * round, 20_001 + 2 * round]
            DispatchQueue.concurrentPerform(iterations: 2) { i in
                _ = try? manager.join(
                    room: "race", userId: "u", tokenIssuedAt: nil, offer: Self.offer(ssrc: ssrcs[i]))
            }
            // Exactly one session is in the room, and only its SSRC is bound: the replaced one decodes nothing.
            #expect(manager.room("race")?.participantCount == 1)
            #expect(manager.ssrcBindings == 1, "round \(round)")
        }
    }

    @Test func removingAnOldSessionLeavesTheUsersNewOneInPlace() throws {
        let manager = RoomManager(settings: RoomSettings(), logger: Logger(label: "test"))
        defer { manager.shutdown() }
        _ = try manager.join(room: "s", userId: "u", tokenIssuedAt: nil, offer: Self.offer(ssrc: 9001))
        let first = try #require(manager.room("s")?.participant("u")?.sessionID)
        _ = try manager.join(room: "s", userId: "u", tokenIssuedAt: nil, offer: Self.offer(ssrc: 9002))
        #expect(!manager.removeParticipant(room: "s", userId: "u", reason: .timeout, session: first))
        #expect(manager.room("s")?.participant("u") != nil && manager.ssrcBindings == 1)
    }

    @Test func aGainJustOutsideTheRangeIsRefusedBeforeItCouldRoundIntoIt() throws {
        let manager = RoomManager(settings: RoomSettings(), logger: Logger(label: "test"))
        defer { manager.shutdown() }
        _ = try manager.join(room: "g", userId: "u", tokenIssuedAt: nil, offer: Self.offer(ssrc: 9101))
        // As Floats these are 4.0 and -0.0, inside 0...4.
        for gain in [4.000_000_1, -1e-50] {
            #expect(throws: RoomError.badRequest("invalid_gain", "gain must be within 0.0...4.0")) {
                try manager.setMix(room: "g", userId: "u", muted: nil, gain: gain)
            }
        }
        try manager.setMix(room: "g", userId: "u", muted: nil, gain: 4)
        #expect(manager.room("g")?.participant("u")?.gain == 4)
    }

    @Test func aKickRefusesTokensIssuedUpToTheSkewAfterIt() {
        let kicks = KickList()
        kicks.record("bob", atSeconds: 1_000)
        #expect(kicks.refuses("bob", tokenIssuedAt: 999) && kicks.refuses("bob", tokenIssuedAt: 1_060))
        #expect(kicks.refuses("bob", tokenIssuedAt: nil))
        #expect(!kicks.refuses("bob", tokenIssuedAt: 1_061) && !kicks.refuses("alice", tokenIssuedAt: 0))
        kicks.forget(before: 1_000)
        #expect(kicks.refuses("bob", tokenIssuedAt: 999))
        kicks.forget(before: 1_001)
        #expect(!kicks.refuses("bob", tokenIssuedAt: 999) && kicks.isEmpty)
    }

    @Test func aKickOutlivesItsRoomUntilEveryTokenThatCouldPredateItExpired() throws {
        let manager = RoomManager(
            settings: RoomSettings(maxTokenTTLSeconds: 3_600), logger: Logger(label: "test"))
        defer { manager.shutdown() }
        let now = Int64(Date().timeIntervalSince1970)
        _ = try manager.join(room: "k", userId: "bob", tokenIssuedAt: now - 10, offer: Self.offer(ssrc: 9101))
        #expect(manager.removeParticipant(room: "k", userId: "bob", reason: .kicked))
        #expect(manager.closeRoom("k"))
        let again = #expect(throws: RoomError.self) {
            try manager.join(room: "k", userId: "bob", tokenIssuedAt: now - 10, offer: Self.offer(ssrc: 9102))
        }
        #expect(again?.code == "kicked")
        #expect(manager.room("k") == nil)  // refused before the room could be created again for him
        manager.forgetExpiredKicks(nowSeconds: now + 3_600 + 2 * KickList.skewSeconds)
        #expect(manager.isKicked(room: "k", userId: "bob", tokenIssuedAt: now - 10))
        manager.forgetExpiredKicks(nowSeconds: now + 3_600 + 2 * KickList.skewSeconds + 5)
        #expect(!manager.isKicked(room: "k", userId: "bob", tokenIssuedAt: now - 10))
    }

    @Test func withoutAutoCreationOnlyAnAdminsJoinCreatesARoom() throws {
        let manager = RoomManager(
            settings: RoomSettings(autoCreateRooms: false), logger: Logger(label: "test"))
        defer { manager.shutdown() }
        let refused = #expect(throws: RoomError.self) {
            try manager.join(room: "new", userId: "guest", tokenIssuedAt: nil, offer: Self.offer(ssrc: 9201))
        }
        #expect(refused?.kind == .notFound && manager.room("new") == nil && manager.ssrcBindings == 0)
        _ = try manager.join(
            room: "new", userId: "host", tokenIssuedAt: nil, isAdmin: true, offer: Self.offer(ssrc: 9202))
        _ = try manager.join(room: "new", userId: "guest", tokenIssuedAt: nil, offer: Self.offer(ssrc: 9203))
        #expect(manager.room("new")?.participantCount == 2)
    }
}
