import Foundation
import Logging
import Testing
@testable import Rooms

/// Rooms with nobody in them close by themselves after `emptyRoomTimeoutMs` (driven with injected time).
@Suite(.serialized) struct IdleRoomTests {
    static let audioRoom = #"{"name":"idle","audioOnly":true,"audio":{"bitrate":64,"channels":1}}"#
    static let offer = "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
        + "m=audio 9 RTP/AVP 111\r\na=rtpmap:111 opus/48000/2\r\na=ssrc:7001\r\n"

    static func manager(emptyMs: Int64, sweepInterval: Double? = nil) -> RoomManager {
        RoomManager(settings: RoomSettings(emptyRoomTimeoutMs: emptyMs), logger: Logger(label: "test"), sweepInterval: sweepInterval)
    }

    static func createRoom(_ manager: RoomManager) throws -> Room {
        try manager.createRoom(JSONDecoder().decode(RoomConfigRequest.self, from: Data(audioRoom.utf8)))
    }

    /// Every lifecycle event type (and user and reason where present) until the hub finishes; the periodic
    /// `voice_levels` of a room with a participant are left out.
    static func drain(_ events: AsyncStream<String>) async -> [String] {
        var out: [String] = []
        for await text in events {
            let json = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
            if json["type"] as? String == "voice_levels" { continue }
            out.append([json["type"], json["userId"], json["reason"]].compactMap { $0 as? String }.joined(separator: " "))
        }
        return out
    }

    @Test func anEmptyRoomClosesExactlyWhenTheTimeoutHasPassed() async throws {
        let manager = Self.manager(emptyMs: 60_000)
        defer { manager.shutdown() }
        let events = try Self.createRoom(manager).events.subscribe()
        manager.sweep(nowMs: 1_000)            // first seen empty
        manager.sweep(nowMs: 60_999)
        #expect(manager.room("idle") != nil)
        manager.sweep(nowMs: 61_000)
        #expect(manager.room("idle") == nil)
        #expect(await Self.drain(events) == ["room_closed"])
    }

    @Test func zeroMeansNever() throws {
        let manager = Self.manager(emptyMs: 0)
        defer { manager.shutdown() }
        _ = try Self.createRoom(manager)
        manager.sweep(nowMs: 0)
        manager.sweep(nowMs: 1_000_000_000)
        #expect(manager.room("idle") != nil)
    }

    @Test func theEmptinessClockStartsWhenTheLastParticipantLeaves() async throws {
        let manager = Self.manager(emptyMs: 60_000)
        defer { manager.shutdown() }
        let events = try Self.createRoom(manager).events.subscribe()
        let t0 = Clock.nowMs()
        manager.sweep(nowMs: t0)               // empty since t0
        _ = try manager.join(room: "idle", userId: "alice", tokenIssuedAt: nil, offer: Self.offer)
        manager.sweep(nowMs: t0 + 9_000)       // alice sends nothing, but is within the 10 s participant timeout
        manager.sweep(nowMs: t0 + 61_000)      // alice times out now: the room is empty from here
        #expect(manager.room("idle")?.participantCount == 0)
        manager.sweep(nowMs: t0 + 120_999)
        #expect(manager.room("idle") != nil)
        manager.sweep(nowMs: t0 + 121_000)
        #expect(manager.room("idle") == nil)
        #expect(await Self.drain(events) == ["participant_joined alice", "participant_left alice timeout", "room_closed"])
    }

    @Test func aRoomCreatedAgainUnderTheSameNameStartsAFreshClock() throws {
        let manager = Self.manager(emptyMs: 60_000)
        defer { manager.shutdown() }
        _ = try Self.createRoom(manager)
        manager.sweep(nowMs: 0)
        #expect(manager.closeRoom("idle"))
        _ = try Self.createRoom(manager)
        manager.sweep(nowMs: 60_000)           // the old room's start does not count for the new one
        #expect(manager.room("idle") != nil)
        manager.sweep(nowMs: 120_000)
        #expect(manager.room("idle") == nil)
    }

    @Test func theTimerClosesAnIdleRoomOnItsOwn() async throws {
        let manager = Self.manager(emptyMs: 300, sweepInterval: 0.1)
        defer { manager.shutdown() }
        let events = try Self.createRoom(manager).events.subscribe()
        // Measured, not counted: on a loaded machine a 50 ms sleep can take much longer.
        let start = ContinuousClock.now
        while manager.room("idle") != nil && ContinuousClock.now - start < .seconds(5) {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(manager.room("idle") == nil)
        #expect(ContinuousClock.now - start >= .milliseconds(300))
        #expect(await Self.drain(events) == ["room_closed"])
    }
}
