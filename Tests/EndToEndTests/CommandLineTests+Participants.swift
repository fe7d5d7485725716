import Foundation
import Testing
import Rooms
import TestSupport

extension EndToEnd.CommandLineTests {
    /// Joins `user` to `room` with an audio offer (no media follows).
    static func join(_ server: CohostHarness, room: String, user: String, ssrc: UInt32) throws {
        let joined = try server.call(
            "POST", "/v1/rooms/\(room)/participants", token: server.token(room: room, user: user),
            body: Data(CohostHarness.offer(audioSSRC: ssrc, videoSSRC: nil).utf8), contentType: "application/sdp")
        #expect(joined.status == 201, "\(String(decoding: joined.body, as: UTF8.self))")
    }

    @Test func participantCommandsListMuteAndKick() throws {
        let s = try Self.server()
        #expect(try Self.cohost(s, ["room", "create", "p", "--audio-only"]).status == 0)
        try Self.join(s, room: "p", user: "guest", ssrc: 5101)

        let listJSON = try Self.cohost(s, ["participant", "list", "p", "--json"])
        let joinedAt = try #require((listJSON.json as? [[String: Any]])?.first?["joinedAt"] as? String)
        let list = try Self.cohost(s, ["participant", "list", "p"])
        #expect(
            list.rows == [
                ["USER", "ADMIN", "MUTED", "GAIN", "LEVEL", "JOINED", "STREAMS"],
                ["guest", "no", "no", "1", "0", joinedAt, "audio opus 0 kbps"],
            ], "\(list.stdout)")
        let show = try Self.cohost(s, ["room", "show", "p", "--json"])
        try Self.expectValid([
            Self.answer("GET", "/v1/rooms/p", 200, try Self.room(show.stdout, with: "participants", listJSON.stdout))
        ])

        let muted = try Self.cohost(s, ["participant", "mute", "p", "guest", "--gain", "0.5"])
        #expect(muted.status == 0 && muted.stdout == "muted guest in room p at gain 0.5\n")
        #expect(
            try Self.cohost(s, ["participant", "list", "p"]).rows.last?.prefix(5) == ["guest", "no", "yes", "0.5", "0"])
        let unmuted = try Self.cohost(s, ["participant", "mute", "p", "guest", "--unmute"])
        #expect(unmuted.status == 0 && unmuted.stdout == "unmuted guest in room p\n")
        // The gain left out keeps its value.
        #expect(
            try Self.cohost(s, ["participant", "list", "p"]).rows.last?.prefix(5) == ["guest", "no", "no", "0.5", "0"])
        let loud = try Self.cohost(s, ["participant", "mute", "p", "guest", "--gain", "9"])
        #expect(loud.status == 1 && loud.stderr.hasPrefix("error: invalid_gain: "), "\(loud.stderr)")

        let kicked = try Self.cohost(s, ["participant", "kick", "p", "guest"])
        #expect(kicked.status == 0 && kicked.stdout == "kicked guest from room p\n")
        #expect(
            try Self.cohost(s, ["participant", "list", "p"]).rows == [
                ["USER", "ADMIN", "MUTED", "GAIN", "LEVEL", "JOINED", "STREAMS"]
            ])
        let again = try Self.cohost(s, ["participant", "kick", "p", "guest"])
        #expect(again.status == 1 && again.stderr == "error: not_found: no participant 'guest' in room 'p'\n")
    }

    @Test func eventsArePrintedAsJSONLinesUntilTheRoomCloses() throws {
        let s = try Self.server()
        #expect(try Self.cohost(s, ["room", "create", "ev", "--audio-only"]).status == 0)
        let events = CohostCommand(["events", "ev", "--key", CohostHarness.key], environment: Self.environment(s))
        try events.start()
        for _ in 0..<200 where !events.stderr.contains("following the events of room ev") { usleep(50_000) }
        #expect(events.stderr == "following the events of room ev\n")

        try Self.join(s, room: "ev", user: "guest", ssrc: 5201)
        for _ in 0..<100 where !events.stdout.contains("participant_joined") { usleep(50_000) }
        #expect(try Self.cohost(s, ["participant", "kick", "ev", "guest"]).status == 0)
        #expect(try Self.cohost(s, ["room", "close", "ev"]).status == 0)
        // The server closes the socket after room_closed, and the command ends with it.
        let result = try events.wait(timeout: 10)
        #expect(result.status == 0, "\(result.stderr)")

        let lines = result.stdout.split(separator: "\n").map(String.init)
        let parsed = lines.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
        #expect(parsed.count == lines.count && result.stdout.hasSuffix("\n"))
        let types = parsed.compactMap { $0["type"] as? String }.filter {
            $0 != "voice_levels" && $0 != "active_speaker"
        }
        #expect(
            types == ["participant_joined", "participant_kicked", "participant_left", "room_closed"], "\(result.stdout)"
        )
        // The minted token's user is the login name.
        #expect(parsed.first { $0["type"] as? String == "participant_kicked" }?["by"] as? String == "producer")
        try Self.expectValid(lines.map(Self.event))

        let missing = try Self.cohost(s, ["events", "ev"])
        #expect(missing.status == 1 && missing.stdout.isEmpty && missing.stderr == "error: not_found: no room 'ev'\n")
    }

    @Test func invitePrintsTheJoinLinkAsAFullURL() throws {
        let s = try Self.server()
        #expect(try Self.cohost(s, ["room", "create", "inv", "--audio-only"]).status == 0)
        let invite = try Self.cohost(s, ["invite", "inv", "guest"])
        let prefix = "http://127.0.0.1:\(s.httpPort)/join/inv#token="
        #expect(invite.status == 0 && invite.stdout.hasPrefix(prefix), "\(invite.stdout)")
        let token = String(invite.stdout.dropFirst(prefix.count).dropLast())
        let claims = try RoomToken.verify(
            token, keys: try APIKeys.parse("\(CohostHarness.key):\(CohostHarness.secret)"),
            now: Int64(Date().timeIntervalSince1970))
        #expect(
            claims.sub == "guest" && claims.room == "inv" && !claims.admin && claims.exp - (claims.iat ?? 0) == 3600)

        let json = try Self.cohost(s, ["invite", "inv", "guest", "--ttl", "120", "--json"])
        #expect(
            (json.json as? [String: Any])?["link"] as? String
                == "/join/inv#token=\((json.json as? [String: Any])?["token"] as? String ?? "")")
        try Self.expectValid([Self.answer("POST", "/v1/rooms/inv/invites", 201, json.stdout)])
        let short = try Self.cohost(s, ["invite", "inv", "guest", "--ttl", "30"])
        #expect(short.status == 1 && short.stderr == "error: invalid_ttl: ttlSeconds must be within 60...86400\n")
    }
}
