import Foundation
import Testing
import Mixing
@testable import Rooms

@Suite struct RoomConfigTests {
    func decode(_ json: String) throws -> RoomConfigRequest {
        try JSONDecoder().decode(RoomConfigRequest.self, from: Data(json.utf8))
    }

    @Test func emptyFieldsTakeTheDefaults() throws {
        let c = try decode(#"{"name":"r1"}"#).resolve()
        #expect(c == RoomConfig.defaults(name: "r1"))
        #expect(c.h264Config.keyintFrames == 60)
    }

    @Test func aPresetSetsSizeFpsBitrateAndProfile() throws {
        let c = try decode(#"{"name":"r1","video":{"preset":"medium2"},"audio":{"preset":"high1"}}"#).resolve()
        #expect(c.canvas.width == 368 && c.canvas.height == 640 && c.canvas.fps == 24)
        #expect(c.video.bitrateKbps == 768 && c.video.profile == .high)
        #expect(c.audio.bitrateKbps == 64)
    }

    @Test func eachLimitIsNamedInItsRefusal() throws {
        let cases: [(String, String)] = [
            (#"{"name":"r1","canvas":{"width":99999}}"#, "canvas.width must be within 16...3840, got 99999"),
            (#"{"name":"r1","canvas":{"width":641}}"#, "canvas.width and canvas.height must be even (I420)"),
            (#"{"name":"r1","canvas":{"fps":0}}"#, "canvas.fps must be within 1...60, got 0"),
            (#"{"name":"r1","video":{"bitrate":1}}"#, "video.bitrate (kbps) must be within 64...20000, got 1"),
            (#"{"name":"r1","audio":{"channels":6}}"#, "audio.channels must be 1 or 2"),
            (#"{"name":"r1","canvas":{"background":"red"}}"#, "canvas.background must be #RRGGBB"),
            (#"{"name":"bad name"}"#, "room name must match [A-Za-z0-9_.-]{1,64}"),
            (#"{"name":"r1","video":{"preset":"ultra"}}"#, "unknown video preset 'ultra'; known: high1, high2, high3, low1, low2, low3, medium1, medium2, medium3"),
        ]
        for (json, message) in cases {
            let request = try decode(json)
            do {
                _ = try request.resolve()
                Issue.record("accepted \(json)")
            } catch {
                #expect(error.status == 400 && error.message == message)
            }
        }
    }
}

@Suite struct RoomEventTests {
    @Test func eventsEncodeTypeRoomTimeAndTheirFields() {
        let time = Date(timeIntervalSince1970: 1_700_000_000.25)
        #expect(RoomEvent.participantLeft(userId: "bob", reason: .kicked).json(room: "r1", time: time)
                == #"{"reason":"kicked","room":"r1","time":"2023-11-14T22:13:20.250Z","type":"participant_left","userId":"bob"}"#)
        #expect(RoomEvent.roomClosed.json(room: "r1", time: time)
                == #"{"room":"r1","time":"2023-11-14T22:13:20.250Z","type":"room_closed"}"#)
    }

    @Test func aReaderThatFallsBehindIsDroppedNotBuffered() async {
        let hub = EventHub(room: "r1", bufferLimit: 2)
        let stream = hub.subscribe()
        for _ in 0..<3 { hub.publish(.roomClosed) }
        #expect(hub.subscriberCount == 0)
        var count = 0
        for await _ in stream { count += 1 }
        #expect(count == 2)
    }
}
