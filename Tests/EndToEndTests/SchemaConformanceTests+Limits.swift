import Foundation
import Testing
import Rooms
import TestSupport

/// Server-wide limits: body sizes (413) and the number of rooms (429).
extension EndToEnd.SchemaConformanceTests {
    @Test func oversizedBodiesAre413() throws {
        let s = try conformanceServer()
        #expect(try s.call("POST", "/v1/rooms", token: s.root, json: #"{"name":"big","audioOnly":true}"#).status == 201)
        // Valid JSON, just longer than 64 KiB: the size is what is refused.
        let padded = #"{"mode":"grid","pad":""# + String(repeating: "x", count: 70_000) + #""}"#
        // (POST /v1/rooms takes up to 3 base64 pictures, ~17 MB: its limit is not exercised here.)
        for (method, path) in [
            ("PUT", "/v1/rooms/big/layout"), ("POST", "/v1/rooms/big/outputs"),
            ("PATCH", "/v1/rooms/big/participants/u"),
        ] {
            let answer = try s.call(method, path, token: s.root, json: padded)
            #expect(
                answer.status == 413 && answer.errorCode == "body_too_large",
                "\(method) \(path): \(answer.status) \(answer.text)")
        }
        #expect(try s.call("DELETE", "/v1/rooms/big", token: s.root).status == 204)
    }

    @Test func theHundredAndFirstRoomIs429() throws {
        let s = try conformanceServer()
        let existing = (try s.call("GET", "/v1/rooms", token: s.root).json?["rooms"] as? [Any])?.count ?? 0
        var made: [String] = []
        defer { for name in made { _ = try? s.call("DELETE", "/v1/rooms/\(name)", token: s.root) } }
        // Audio-only rooms are cheap (one AAC encoder each); the limit is 100 per server.
        for i in 0..<(100 - existing) {
            let answer = try s.call(
                "POST", "/v1/rooms", token: s.root,
                json: #"{"name":"many\#(i)","audioOnly":true,"audio":{"bitrate":32,"channels":1}}"#)
            #expect(answer.status == 201, "\(answer.text)")
            if answer.status == 201 { made.append("many\(i)") }
        }
        let over = try s.call("POST", "/v1/rooms", token: s.root, json: #"{"name":"one-too-many","audioOnly":true}"#)
        #expect(over.status == 429 && over.errorCode == "limit_exceeded", "\(over.text)")
        #expect(over.text.contains("at most 100 rooms"))
        // A join that would create a room meets the same limit.
        let join = try s.call(
            "POST", "/v1/rooms/one-too-many/participants", token: Self.mint(sub: "eve", room: "one-too-many"),
            sdp: CohostHarness.offer(audioSSRC: 34001, videoSSRC: nil))
        #expect(join.status == 429 && join.errorCode == "limit_exceeded")
    }
}
