import Codecs
import Foundation
import Logging
import Media
import RTP
import Testing
@testable import Rooms
import TestSupport
import Clocks

/// Rooms with nobody in them close by themselves after `emptyRoomTimeoutMs` (driven with injected time).
@Suite(.serialized) struct IdleRoomTests {
    static let audioRoom = #"{"name":"idle","audioOnly":true,"audio":{"bitrate":64,"channels":1}}"#
    static let offer = TestOffer.plain(audio: 7001, direction: nil)

    static func manager(emptyMs: Int64) -> RoomManager {
        RoomManager(settings: RoomSettings(emptyRoomTimeoutMs: emptyMs), logger: Logger(label: "test"))
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
            out.append(
                [json["type"], json["userId"], json["reason"]].compactMap { $0 as? String }.joined(separator: " "))
        }
        return out
    }

    @Test func anEmptyRoomClosesExactlyWhenTheTimeoutHasPassed() async throws {
        let manager = Self.manager(emptyMs: 60_000)
        defer { manager.shutdown() }
        let events = try Self.createRoom(manager).events.subscribe()
        manager.sweep(nowMs: 1_000)  // first seen empty
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
        let t0 = MonotonicClock.nowMs()
        manager.sweep(nowMs: t0)  // empty since t0
        _ = try manager.join(room: "idle", userId: "alice", tokenIssuedAt: nil, offer: Self.offer)
        manager.sweep(nowMs: t0 + 9_000)  // alice sends nothing, but is within the 10 s participant timeout
        manager.sweep(nowMs: t0 + 61_000)  // alice times out now: the room is empty from here
        #expect(manager.room("idle")?.participantCount == 0)
        manager.sweep(nowMs: t0 + 120_999)
        #expect(manager.room("idle") != nil)
        manager.sweep(nowMs: t0 + 121_000)
        #expect(manager.room("idle") == nil)
        #expect(
            await Self.drain(events) == ["participant_joined alice", "participant_left alice timeout", "room_closed"])
    }

    @Test func theSweepRemovesExactlyTheParticipantsSilentLongerThanTheTimeout() async throws {
        let manager = Self.manager(emptyMs: 0)
        defer { manager.shutdown() }
        let room = try Self.createRoom(manager)
        let events = room.events.subscribe()
        let beforeJoins = MonotonicClock.nowMs()
        _ = try manager.join(room: "idle", userId: "alice", tokenIssuedAt: nil, offer: Self.offer)
        _ = try manager.join(
            room: "idle", userId: "bob", tokenIssuedAt: nil,
            offer: Self.offer.replacingOccurrences(of: "ssrc:7001", with: "ssrc:7002"))
        let afterJoins = MonotonicClock.nowMs()
        // Bob sends one Opus packet 30 s after joining; Alice sends nothing.
        let bob = try #require(room.participant("bob"))
        let packet = RTPPacket(
            payloadType: 111, sequenceNumber: 1, timestamp: 960, ssrc: 7002, payload: [0xF8, 0xFF, 0xFE])
        bob.receive(packet, bytes: 15, nowMs: afterJoins + 30_000)
        #expect(room.participants(idleLongerThan: 10_000, nowMs: beforeJoins + 10_000).isEmpty)
        #expect(room.participants(idleLongerThan: 10_000, nowMs: afterJoins + 30_000).map(\.userId) == ["alice"])
        manager.sweep(nowMs: afterJoins + 30_000)
        #expect(room.participants.map(\.userId) == ["bob"])
        manager.sweep(nowMs: afterJoins + 40_000)  // silent for exactly the timeout: not longer
        #expect(room.participants.map(\.userId) == ["bob"])
        manager.sweep(nowMs: afterJoins + 40_001)
        #expect(room.participantCount == 0)
        #expect(manager.closeRoom("idle"))
        #expect(
            await Self.drain(events) == [
                "participant_joined alice", "participant_joined bob", "participant_left alice timeout",
                "participant_left bob timeout", "room_closed",
            ])
    }

    @Test func aRoomCreatedAgainUnderTheSameNameStartsAFreshClock() throws {
        let manager = Self.manager(emptyMs: 60_000)
        defer { manager.shutdown() }
        _ = try Self.createRoom(manager)
        manager.sweep(nowMs: 0)
        #expect(manager.closeRoom("idle"))
        _ = try Self.createRoom(manager)
        manager.sweep(nowMs: 60_000)  // the old room's start does not count for the new one
        #expect(manager.room("idle") != nil)
        manager.sweep(nowMs: 120_000)
        #expect(manager.room("idle") == nil)
    }
}

/// A room with nobody in it and no output mixes, composes and encodes nothing; what it would show is still
/// what a snapshot gets.
@Suite struct IdleRoomWorkTests {
    @Test func anIdleRoomComposesNothingYetItsSnapshotShowsAPictureSetMeanwhile() async throws {
        let manager = RoomManager(settings: RoomSettings(emptyRoomTimeoutMs: 0), logger: Logger(label: "test"))
        defer { manager.shutdown() }
        let request = ##"{"name":"quiet","canvas":{"width":64,"height":36,"fps":30,"background":"#000000"}}"##
        let room = try manager.createRoom(JSONDecoder().decode(RoomConfigRequest.self, from: Data(request.utf8)))
        try await Task.sleep(for: .milliseconds(200))  // ≈6 video and 10 audio ticks go by
        #expect(room.encodedFrames == (video: 0, audio: 0))
        var red = VideoFrame(width: 64, height: 36)
        red.fill(YUVColor(r: 255, g: 0, b: 0))
        let png = try PNGEncoder.encode(red)
        let patch = "{\"backgroundImage\":\"" + Data(png).base64EncodedString() + "\"}"
        try room.apply(JSONDecoder().decode(RoomPatch.self, from: Data(patch.utf8)))
        #expect(await eventually { room.ticksAreParked })
        let canvas = try #require(room.canvasSnapshot)
        #expect(canvas.y.allSatisfy { $0 == red.y[0] })
        #expect(canvas.u.allSatisfy { $0 == red.u[0] } && canvas.v.allSatisfy { $0 == red.v[0] })
        // Parked, so no tick composes: a second picture must still show in the next snapshot.
        var blue = VideoFrame(width: 64, height: 36)
        blue.fill(YUVColor(r: 0, g: 0, b: 255))
        let bluePatch = "{\"backgroundImage\":\"" + Data(try PNGEncoder.encode(blue)).base64EncodedString() + "\"}"
        try room.apply(JSONDecoder().decode(RoomPatch.self, from: Data(bluePatch.utf8)))
        let second = try #require(room.canvasSnapshot)
        // Uniform, and blue within the ±1 of a round trip through RGB (pure blue is at the edge of the gamut).
        for (plane, want) in [(second.y, blue.y[0]), (second.u, blue.u[0]), (second.v, blue.v[0])] {
            #expect(plane.allSatisfy { $0 == plane[0] })
            #expect(abs(Int(plane[0]) - Int(want)) <= 1)
        }
    }

    @Test func anIdleRoomGetsNoTicksUntilSomebodyJoinsAndParksAgainWhenTheyLeave() async throws {
        let manager = RoomManager(settings: RoomSettings(emptyRoomTimeoutMs: 0), logger: Logger(label: "test"))
        defer { manager.shutdown() }
        let room = try IdleRoomTests.createRoom(manager)
        #expect(await eventually { room.ticksAreParked })
        _ = try manager.join(room: "idle", userId: "alice", tokenIssuedAt: nil, offer: IdleRoomTests.offer)
        #expect(!room.ticksAreParked)
        try await Task.sleep(for: .milliseconds(100))
        #expect(!room.ticksAreParked)  // somebody is in: every tick runs
        #expect(manager.removeParticipant(room: "idle", userId: "alice", reason: .left))
        #expect(await eventually { room.ticksAreParked })
        #expect(room.encodedFrames == (video: 0, audio: 0))
    }

    @Test func anOutputWakesAParkedRoomAndItsAudioStartsOnTheClock() async throws {
        let manager = RoomManager(settings: RoomSettings(emptyRoomTimeoutMs: 0), logger: Logger(label: "test"))
        defer { manager.shutdown() }
        let created = MonotonicClock.nowMs()
        let room = try IdleRoomTests.createRoom(manager)
        let createdBy = MonotonicClock.nowMs()  // the room's clock starts within one 20 ms tick of this
        try await Task.sleep(for: .milliseconds(300))
        #expect(await eventually { room.ticksAreParked })
        let path = NSTemporaryDirectory() + "cohost-idle-\(UUID().uuidString).flv"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let added = MonotonicClock.nowMs()
        let output = try room.startOutput(url: "file://" + path)
        #expect(!room.ticksAreParked)
        #expect(await eventually { room.encodedFrames.audio > 5 })
        #expect(!room.ticksAreParked)
        #expect(room.stopOutput(id: output.id))
        let stopped = MonotonicClock.nowMs()
        // The first AAC frame is stamped with the time of the tick it was mixed at, not 0: the timeline went on
        // while the room was parked.
        let audio = flvTags(try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))).filter { $0.type == 8 }
            .dropFirst()
        let first = Int64(try #require(audio.first?.ms))
        #expect(first >= added - createdBy - 40 && first <= stopped - created)
        #expect(added - createdBy >= 300)
    }
}
