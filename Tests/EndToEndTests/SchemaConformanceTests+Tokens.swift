import Foundation
import Testing
import Rooms
import TestSupport

/// Tokens, permissions and kicks (protocol/token.md): each refusal with its own status and code.
extension EndToEnd.SchemaConformanceTests {
    static func now() -> Int64 { Int64(Date().timeIntervalSince1970) }

    /// A token with any claims, signed with `secret`.
    static func mint(
        iss: String = CohostHarness.key, sub: String = "u", room: String, admin: Bool = false,
        exp: Int64? = nil, nbf: Int64? = nil, iat: Int64? = nil, secret: String = CohostHarness.secret
    ) -> String {
        TestToken.mint(key: iss, secret: secret, room: room, user: sub, admin: admin, exp: exp, nbf: nbf, iat: iat)
    }

    /// `{"alg":"none"}` with a valid payload and no signature: must never be accepted.
    static func unsignedToken(room: String) -> String {
        func b64(_ s: String) -> String {
            Data(s.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(
                of: "/", with: "_"
            )
            .replacingOccurrences(of: "=", with: "")
        }
        return b64(#"{"alg":"none","typ":"JWT"}"#) + "."
            + b64(#"{"iss":"testkey","sub":"u","room":"\#(room)","admin":true,"exp":\#(now() + 600)}"#) + "."
    }

    @Test func everyTokenRefusalHasItsOwnCode() throws {
        let s = try conformanceServer()
        #expect(try s.call("POST", "/v1/rooms", token: s.root, json: #"{"name":"tok","audioOnly":true}"#).status == 201)
        let cases: [(String, [(String, String)], String)] = [
            ("no header", [], "token_missing"),
            ("not a JWT", [("Authorization", "Bearer abc")], "token_malformed"),
            ("not bearer", [("Authorization", "Basic dXNlcjpwYXNz")], "token_malformed"),
            ("alg none", [("Authorization", "Bearer \(Self.unsignedToken(room: "tok"))")], "token_malformed"),
            (
                "wrong secret", [("Authorization", "Bearer \(Self.mint(room: "tok", admin: true, secret: "guess"))")],
                "token_bad_signature"
            ),
            (
                "unknown key", [("Authorization", "Bearer \(Self.mint(iss: "otherkey", room: "tok", admin: true))")],
                "token_unknown_key"
            ),
            (
                "expired",
                [
                    (
                        "Authorization",
                        "Bearer \(Self.mint(room: "tok", admin: true, exp: Self.now() - 3600, iat: Self.now() - 7200))"
                    )
                ], "token_expired"
            ),
            (
                "not yet valid",
                [("Authorization", "Bearer \(Self.mint(room: "tok", admin: true, nbf: Self.now() + 3600))")],
                "token_not_yet_valid"
            ),
        ]
        for (name, headers, code) in cases {
            let answer = try s.call("GET", "/v1/rooms/tok", headers: headers)
            #expect(answer.status == 401 && answer.errorCode == code, "\(name): \(answer.status) \(answer.text)")
        }
        // The events path takes the token from the query too, with the same refusals.
        let events = [
            ("", "token_missing"), ("?token=abc", "token_malformed"),
            ("?token=\(Self.mint(room: "tok", exp: Self.now() - 3600))", "token_expired"),
        ]
        for (query, code) in events {
            let answer = try s.call("GET", "/v1/rooms/tok/events\(query)")
            #expect(answer.status == 401 && answer.errorCode == code, "\(query): \(answer.text)")
        }
        // Every route checks the token before anything else.
        for (method, path) in [
            ("POST", "/v1/rooms"), ("GET", "/v1/rooms"), ("DELETE", "/v1/rooms/tok"), ("PUT", "/v1/rooms/tok/layout"),
            ("POST", "/v1/rooms/tok/outputs"), ("DELETE", "/v1/rooms/tok/outputs/o1"),
            ("POST", "/v1/rooms/tok/participants"), ("DELETE", "/v1/rooms/tok/participants/u"),
            ("PATCH", "/v1/rooms/tok/participants/u"), ("GET", "/v1/rooms/tok/snapshot"),
        ] {
            let answer = try s.call(method, path)
            #expect(answer.status == 401 && answer.errorCode == "token_missing", "\(method) \(path): \(answer.text)")
        }
        #expect(try s.call("DELETE", "/v1/rooms/tok", token: s.root).status == 204)
    }

    @Test func adminCallsRefuseParticipantsAndOtherRooms() throws {
        let s = try conformanceServer()
        #expect(
            try s.call("POST", "/v1/rooms", token: s.root, json: #"{"name":"perm","audioOnly":true}"#).status == 201)
        let participant = Self.mint(sub: "pat", room: "perm")
        let otherAdmin = Self.mint(sub: "boss", room: "elsewhere", admin: true)
        let refusals: [(String, String, String?, String)] = [
            ("POST", "/v1/rooms", #"{"name":"perm2"}"#, participant),
            ("POST", "/v1/rooms", #"{"name":"perm2"}"#, otherAdmin),
            ("GET", "/v1/rooms", nil, participant),
            ("GET", "/v1/rooms/perm", nil, participant),
            ("GET", "/v1/rooms/perm", nil, otherAdmin),
            ("DELETE", "/v1/rooms/perm", nil, participant),
            ("PUT", "/v1/rooms/perm/layout", #"{"mode":"grid"}"#, participant),
            ("POST", "/v1/rooms/perm/outputs", #"{"url":"file:///tmp/p.flv"}"#, participant),
            ("DELETE", "/v1/rooms/perm/outputs/o1", nil, participant),
            ("PATCH", "/v1/rooms/perm/participants/pat", #"{"muted":true}"#, participant),
            ("GET", "/v1/rooms/perm/snapshot", nil, participant),
            ("GET", "/v1/rooms/perm/events", nil, otherAdmin),
        ]
        for (method, path, json, token) in refusals {
            let answer = try s.call(method, path, token: token, json: json)
            #expect(
                answer.status == 403 && answer.errorCode == "forbidden",
                "\(method) \(path): \(answer.status) \(answer.text)")
        }
        let join = try s.call(
            "POST", "/v1/rooms/perm/participants", token: otherAdmin,
            sdp: CohostHarness.offer(audioSSRC: 7001, videoSSRC: nil))
        #expect(join.status == 403 && join.errorCode == "forbidden")
        // An admin of one room lists only that room.
        let own = Self.mint(sub: "boss", room: "perm", admin: true)
        let listed = try s.call("GET", "/v1/rooms", token: own)
        #expect((listed.json?["rooms"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["perm"])
        #expect(try s.call("DELETE", "/v1/rooms/perm", token: own).status == 204)
    }

    @Test func kickRulesNonAdmin403Admin204OldTokenRefusedNewTokenAccepted() async throws {
        let s = try conformanceServer()
        #expect(
            try s.call("POST", "/v1/rooms", token: s.root, json: #"{"name":"kick","audioOnly":true}"#).status == 201)
        let events = try await s.events(room: "kick", token: s.root)
        // Issued before the kick (a second earlier, since kicks are recorded to the second).
        let bobOld = Self.mint(sub: "bob", room: "kick", iat: Self.now() - 2)
        let alice = Self.mint(sub: "alice", room: "kick")
        #expect(
            try s.call(
                "POST", "/v1/rooms/kick/participants", token: bobOld,
                sdp: CohostHarness.offer(audioSSRC: 7101, videoSSRC: nil)
            ).status == 201)
        #expect(
            try s.call(
                "POST", "/v1/rooms/kick/participants", token: alice,
                sdp: CohostHarness.offer(audioSSRC: 7102, videoSSRC: nil)
            ).status == 201)

        let byAlice = try s.call("DELETE", "/v1/rooms/kick/participants/bob", token: alice)
        #expect(byAlice.status == 403 && byAlice.errorCode == "forbidden")
        let admin = Self.mint(sub: "mod", room: "kick", admin: true)
        #expect(try s.call("DELETE", "/v1/rooms/kick/participants/bob", token: admin).status == 204)
        #expect(try s.call("DELETE", "/v1/rooms/kick/participants/bob", token: admin).errorCode == "not_found")

        let rejoin = try s.call(
            "POST", "/v1/rooms/kick/participants", token: bobOld,
            sdp: CohostHarness.offer(audioSSRC: 7103, videoSSRC: nil))
        #expect(rejoin.status == 403 && rejoin.errorCode == "kicked", "\(rejoin.text)")
        let listen = try s.call("GET", "/v1/rooms/kick/events?token=\(bobOld)")
        #expect(listen.status == 403 && listen.errorCode == "kicked")
        // Not a WebSocket upgrade, but a fine token: 426.
        #expect(try s.call("GET", "/v1/rooms/kick/events?token=\(alice)").errorCode == "websocket_required")

        // Within the issuers' clock skew (60 s) after the kick, a token may predate it on our clock: refused.
        let kickSecond = Self.now()
        let skewed = Self.mint(sub: "bob", room: "kick", iat: kickSecond + 30)
        let early = try s.call(
            "POST", "/v1/rooms/kick/participants", token: skewed,
            sdp: CohostHarness.offer(audioSSRC: 7103, videoSSRC: nil))
        #expect(early.status == 403 && early.errorCode == "kicked", "\(early.text)")
        // A token issued after that is accepted.
        let bobNew = Self.mint(sub: "bob", room: "kick", iat: kickSecond + 61)
        let back = try s.call(
            "POST", "/v1/rooms/kick/participants", token: bobNew,
            sdp: CohostHarness.offer(audioSSRC: 7103, videoSSRC: nil))
        #expect(back.status == 201 && back.headers["location"] == "/v1/rooms/kick/participants/bob", "\(back.text)")
        // Its own token may leave; then alice leaves; the room closes.
        #expect(try s.call("DELETE", "/v1/rooms/kick/participants/bob", token: bobNew).status == 204)
        #expect(try s.call("DELETE", "/v1/rooms/kick/participants/alice", token: alice).status == 204)
        #expect(try s.call("DELETE", "/v1/rooms/kick", token: admin).status == 204)

        await eventually(seconds: 5) { events.isClosed }
        #expect(
            Self.roomEvents(events.messages) == [
                "participant_joined bob", "participant_joined alice", "participant_kicked bob",
                "participant_left bob kicked",
                "participant_joined bob", "participant_left bob left", "participant_left alice left", "room_closed",
            ])
        #expect(events.messages.contains { $0.contains(#""by":"mod""#) })
    }
}
