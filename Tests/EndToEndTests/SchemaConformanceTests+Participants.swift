import Foundation
import Testing
import Rooms
import TestSupport

/// Joining (SDP over HTTP), the mix controls, leaving, and the events a room publishes about them.
extension EndToEnd.SchemaConformanceTests {
    static func offerWithoutSSRC() -> String {
        CohostHarness.offer(audioSSRC: 1, videoSSRC: nil).replacingOccurrences(of: "a=ssrc:1\r\n", with: "")
    }

    @Test func joinWithMediaThenMixControlsAndEveryJoinRefusal() async throws {
        let s = try conformanceServer()
        let root = s.root
        #expect(
            try s.call(
                "POST", "/v1/rooms", token: root, json: #"{"name":"pt","maxParticipants":2,\#(Self.smallVideo)}"#
            ).status == 201)
        let events = try await s.events(room: "pt", token: root)
        // The WebSocket upgrade itself: 101, as documented.
        let upgrade = try s.call(
            "GET", "/v1/rooms/pt/events?token=\(root)",
            headers: [
                ("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Version", "13"),
                ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
            ])
        #expect(upgrade.status == 101 && upgrade.headers["sec-websocket-accept"] == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")

        let alice = Self.mint(sub: "alice", room: "pt")
        let joined = try s.call(
            "POST", "/v1/rooms/pt/participants", token: alice,
            sdp: CohostHarness.offer(audioSSRC: 30001, videoSSRC: 30002))
        #expect(joined.status == 201 && joined.contentType == "application/sdp")
        #expect(joined.headers["location"] == "/v1/rooms/pt/participants/alice")
        #expect(
            joined.text.contains("m=audio \(s.harness.rtpPort) RTP/AVP 111\r\n")
                && joined.text.contains("m=video \(s.harness.rtpPort) RTP/AVP 96\r\n"))

        // Real VP8 + Opus from ffmpeg: the room reports the first picture and per-stream statistics.
        let sender = try startFFmpegParticipant(
            rtpPort: s.harness.rtpPort, colour: "red", toneHz: 440, audioSSRC: 30001, videoSSRC: 30002)
        defer { sender.terminate() }
        await eventually(seconds: 10) { events.messages.contains { $0.contains("first_video_frame") } }
        let first = events.messages.first { $0.contains("first_video_frame") }.flatMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(
            first?["userId"] as? String == "alice" && first?["width"] as? Int == 320 && first?["height"] as? Int == 180)
        try await Task.sleep(for: .milliseconds(1200))  // one report interval, so fps and kbps are measured
        let room = try s.call("GET", "/v1/rooms/pt", token: root)
        let streams = ((room.json?["participants"] as? [[String: Any]])?.first?["streams"] as? [[String: Any]]) ?? []
        #expect(streams.compactMap { $0["kind"] as? String }.sorted() == ["audio", "video"])
        #expect(streams.allSatisfy { ($0["packets"] as? Int ?? 0) > 0 }, "\(streams)")

        // Mix controls (admin).
        #expect(
            try s.call("PATCH", "/v1/rooms/pt/participants/alice", token: root, json: #"{"muted":true,"gain":2.5}"#)
                .status == 204)
        let mixed = (try s.call("GET", "/v1/rooms/pt", token: root).json?["participants"] as? [[String: Any]])?.first
        #expect(mixed?["muted"] as? Bool == true && mixed?["gain"] as? Double == 2.5)
        let loud = try s.call("PATCH", "/v1/rooms/pt/participants/alice", token: root, json: #"{"gain":9}"#)
        #expect(loud.status == 400 && loud.errorCode == "invalid_gain")
        #expect(
            try s.call("PATCH", "/v1/rooms/pt/participants/alice", token: root, json: #"{"muted":"yes"}"#).errorCode
                == "invalid_json")
        #expect(
            try s.call("PATCH", "/v1/rooms/pt/participants/nobody", token: root, json: #"{"muted":false}"#).errorCode
                == "not_found")

        // Join refusals, each with its code.
        let bob = Self.mint(sub: "bob", room: "pt")
        let garbage = try s.call("POST", "/v1/rooms/pt/participants", token: bob, sdp: "v=0\r\nm=garbage\r\n")
        #expect(garbage.status == 400 && garbage.errorCode == "invalid_sdp")
        let noSSRC = try s.call("POST", "/v1/rooms/pt/participants", token: bob, sdp: Self.offerWithoutSSRC())
        #expect(noSSRC.status == 400 && noSSRC.errorCode == "ssrc_missing")
        let g722 = CohostHarness.offer(audioSSRC: 31009, videoSSRC: nil).replacingOccurrences(
            of: "opus/48000/2", with: "G722/8000")
        let codec = try s.call("POST", "/v1/rooms/pt/participants", token: bob, sdp: g722)
        #expect(codec.status == 415 && codec.errorCode == "unsupported_media")
        let text = try s.call(
            "POST", "/v1/rooms/pt/participants", token: bob, headers: [("Content-Type", "text/plain")],
            body: Array(CohostHarness.offer(audioSSRC: 31009, videoSSRC: nil).utf8))
        #expect(text.status == 415 && text.errorCode == "unsupported_media")
        let big = try s.call(
            "POST", "/v1/rooms/pt/participants", token: bob,
            sdp: CohostHarness.offer(audioSSRC: 31009, videoSSRC: nil)
                + String(repeating: "a=x-pad:0123456789abcdef\r\n", count: 2600))
        #expect(big.status == 413 && big.errorCode == "body_too_large")
        let taken = try s.call(
            "POST", "/v1/rooms/pt/participants", token: bob, sdp: CohostHarness.offer(audioSSRC: 30001, videoSSRC: nil))
        #expect(taken.status == 409 && taken.errorCode == "ssrc_conflict")

        // Bob joins, joins again (replacing his own session, allowed in a full room), carol finds it full.
        #expect(
            try s.call(
                "POST", "/v1/rooms/pt/participants", token: bob,
                sdp: CohostHarness.offer(audioSSRC: 31001, videoSSRC: nil)
            ).status == 201)
        #expect(
            try s.call(
                "POST", "/v1/rooms/pt/participants", token: bob,
                sdp: CohostHarness.offer(audioSSRC: 31003, videoSSRC: nil)
            ).status == 201)
        let carol = Self.mint(sub: "carol", room: "pt")
        let full = try s.call(
            "POST", "/v1/rooms/pt/participants", token: carol,
            sdp: CohostHarness.offer(audioSSRC: 32001, videoSSRC: nil))
        #expect(full.status == 409 && full.errorCode == "room_full")
        #expect(try s.call("DELETE", "/v1/rooms/pt/participants/bob", token: bob).status == 204)
        #expect(try s.call("DELETE", "/v1/rooms/pt/participants/bob", token: bob).errorCode == "not_found")
        #expect(try s.call("DELETE", "/v1/rooms/pt", token: root).status == 204)

        await eventually(seconds: 5) { events.isClosed }
        let summary = Self.roomEvents(events.messages).filter { !$0.hasPrefix("first_video_frame") }
        #expect(
            summary == [
                "participant_joined alice", "participant_joined bob", "participant_left bob replaced",
                "participant_joined bob",
                "participant_left bob left", "participant_left alice room_closed", "room_closed",
            ], "\(summary)")
    }

    @Test func aJoinCreatesAMissingRoomWithTheDefaults() throws {
        let s = try conformanceServer()
        let dora = Self.mint(sub: "dora", room: "implicit")
        #expect(
            try s.call(
                "POST", "/v1/rooms/implicit/participants", token: dora,
                sdp: CohostHarness.offer(audioSSRC: 33001, videoSSRC: nil)
            ).status == 201)
        let room = try s.call("GET", "/v1/rooms/implicit", token: s.root)
        let canvas = room.json?["canvas"] as? [String: Any]
        #expect(canvas?["width"] as? Int == 1280 && canvas?["height"] as? Int == 720 && canvas?["fps"] as? Int == 30)
        #expect(
            room.json?["maxParticipants"] as? Int == 16
                && (room.json?["layout"] as? [String: Any])?["mode"] as? String == "grid")
        #expect(try s.call("DELETE", "/v1/rooms/implicit", token: s.root).status == 204)
    }
}
