import Foundation
import Testing
import Rooms
import TestSupport

extension EndToEnd {
    /// The wire contract (protocol/token.md, §4, §6) over real HTTP against one running `cohost serve`: every
    /// endpoint's success and every error code, each pinned by status and `error.code`. Every answer and
    /// every event received is also validated against `protocol/openapi.yaml` and
    /// `protocol/events.schema.json` when the suite ends (`ConformanceServerTrait`).
    ///
    /// Rooms here are small (160×96 at 5 fps) so the suite stays fast on two cores; each test closes
    /// the rooms it made.
    @Suite(.conformanceServer) struct SchemaConformanceTests {
        static let smallVideo = #""canvas":{"width":160,"height":96,"fps":5},"video":{"bitrate":100}"#

        @Test func healthAndMetricsAnswerWithoutAToken() throws {
            let s = try conformanceServer()
            let health = try s.call("GET", "/healthz")
            #expect(health.status == 200 && health.text == "ok\n")
            #expect(health.contentType?.hasPrefix("text/plain") == true)
            let metrics = try s.call("GET", "/metrics")
            #expect(metrics.status == 200 && metrics.contentType == "text/plain; version=0.0.4")
            #expect(metrics.text.contains("cohost_rooms "), "\(metrics.text.prefix(500))")
        }

        @Test func roomLifecycleWithLayoutOutputsSnapshotAndEvents() async throws {
            let s = try conformanceServer()
            let root = s.root
            let created = try s.call(
                "POST", "/v1/rooms", token: root, json: #"{"name":"ct",\#(Self.smallVideo),"statusIntervalMs":1000}"#)
            #expect(created.status == 201)
            #expect(created.headers["location"] == "/v1/rooms/ct")
            #expect(
                created.json?["name"] as? String == "ct"
                    && (created.json?["canvas"] as? [String: Any])?["fps"] as? Int == 5)
            let events = try await s.events(room: "ct", token: root)
            #expect(try s.call("POST", "/v1/rooms", token: root, json: #"{"name":"ct"}"#).errorCode == "room_exists")

            let list = try s.call("GET", "/v1/rooms", token: root)
            #expect(
                list.status == 200
                    && (list.json?["rooms"] as? [[String: Any]])?.contains { $0["name"] as? String == "ct" } == true)
            let one = try s.call("GET", "/v1/rooms/ct", token: root)
            #expect(one.status == 200 && (one.json?["participants"] as? [Any])?.isEmpty == true)

            // Layout: grid, then custom, then refusals.
            let grid = try s.call("PUT", "/v1/rooms/ct/layout", token: root, json: #"{"mode":"grid"}"#)
            #expect(grid.status == 200 && grid.json?["mode"] as? String == "grid")
            let custom = try s.call(
                "PUT", "/v1/rooms/ct/layout", token: root,
                json:
                    #"{"mode":"custom","regions":[{"userId":"alice","x":0,"y":0,"width":80,"height":48,"z":1,"fit":"contain"}]}"#
            )
            #expect(
                custom.status == 200
                    && (custom.json?["regions"] as? [[String: Any]])?.first?["fit"] as? String == "contain")
            let outside = try s.call(
                "PUT", "/v1/rooms/ct/layout", token: root,
                json: #"{"mode":"custom","regions":[{"userId":"a","x":500,"y":0,"width":10,"height":10}]}"#)
            #expect(outside.status == 400 && outside.errorCode == "invalid_layout")
            let unknownMode = try s.call("PUT", "/v1/rooms/ct/layout", token: root, json: #"{"mode":"mosaic"}"#)
            #expect(unknownMode.status == 400 && unknownMode.errorCode == "invalid_layout", "\(unknownMode.text)")
            #expect(unknownMode.text.contains("unknown mode"), "\(unknownMode.text)")
            #expect(
                try s.call("PUT", "/v1/rooms/ct/layout", token: root, json: "{not json").errorCode == "invalid_json")
            #expect(try s.call("PUT", "/v1/rooms/nope/layout", token: root, json: #"{"mode":"grid"}"#).status == 404)

            // Outputs: a file output connects; bad ones are refused with the limit named.
            let path = "/tmp/cohost-conformance-\(UUID().uuidString).flv"
            defer { try? FileManager.default.removeItem(atPath: path) }
            let output = try s.call(
                "POST", "/v1/rooms/ct/outputs", token: root, json: #"{"url":"file://\#(path)","maxRetries":2}"#)
            #expect(output.status == 201 && output.headers["location"] == "/v1/rooms/ct/outputs/o1")
            #expect(output.json?["id"] as? String == "o1" && output.json?["maxRetries"] as? Int == 2)
            let badQueue = try s.call(
                "POST", "/v1/rooms/ct/outputs", token: root, json: #"{"url":"file:///tmp/x.flv","queueMs":20000}"#)
            #expect(badQueue.status == 400 && badQueue.errorCode == "invalid_output")
            #expect(badQueue.text.contains("queueMs must be within 100...10000, got 20000"))
            #expect(
                try s.call("POST", "/v1/rooms/ct/outputs", token: root, json: #"{"url":"udp://h:9000"}"#).errorCode
                    == "invalid_output")
            let noURL = try s.call("POST", "/v1/rooms/ct/outputs", token: root, json: #"{"queueMs":100}"#)
            #expect(
                noURL.errorCode == "invalid_output" && noURL.text.contains("an output needs a url"))
            #expect(
                try s.call("POST", "/v1/rooms/nope/outputs", token: root, json: #"{"url":"file:///tmp/n.flv"}"#).status
                    == 404)

            // One status interval (1 s) later the output reports its rates.
            await eventually(seconds: 5) { events.messages.contains { $0.contains(#""type":"output_status""#) } }
            #expect(events.messages.contains { $0.contains(#""type":"output_status""#) })
            let withOutput = try s.call("GET", "/v1/rooms/ct", token: root)
            #expect((withOutput.json?["outputs"] as? [[String: Any]])?.first?["state"] as? String == "connected")

            let snapshot = try s.call("GET", "/v1/rooms/ct/snapshot", token: root)
            #expect(
                snapshot.status == 200 && snapshot.contentType == "image/png"
                    && snapshot.headers["cache-control"] == "no-store")
            #expect(Array(snapshot.body.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
            #expect(try s.call("GET", "/v1/rooms/nope/snapshot", token: root).errorCode == "not_found")

            #expect(try s.call("DELETE", "/v1/rooms/ct/outputs/o1", token: root).status == 204)
            #expect(try s.call("DELETE", "/v1/rooms/ct/outputs/o1", token: root).errorCode == "not_found")
            #expect(try s.call("DELETE", "/v1/rooms/ct", token: root).status == 204)
            #expect(try s.call("DELETE", "/v1/rooms/ct", token: root).errorCode == "not_found")
            #expect(try s.call("GET", "/v1/rooms/ct", token: root).errorCode == "not_found")

            await eventually(seconds: 5) { events.isClosed }
            let types = events.messages.compactMap { Self.field("type", of: $0) }
            #expect(types.last == "room_closed")
            let states = events.messages.filter { Self.field("type", of: $0) == "output_state" }.compactMap {
                Self.field("state", of: $0)
            }
            #expect(
                states.starts(with: ["connecting", "connected"])
                    && states.suffix(2) == ["disconnecting", "disconnected"], "\(states)")
        }

        @Test func roomConfigRefusalsNameTheirCode() throws {
            let s = try conformanceServer()
            let root = s.root
            let cases: [(String, String)] = [
                ("{not json", "invalid_json"),
                (#"{"name":5}"#, "invalid_json"),
                (#"{"audioOnly":true}"#, "invalid_room"),
                (#"{"name":"bad name!"}"#, "invalid_room"),
                (#"{"name":"r","video":{"preset":"ultra9"}}"#, "invalid_preset"),
                (#"{"name":"r","audio":{"preset":"low1"}}"#, "invalid_preset"),
                (#"{"name":"r","video":{"profile":"extended"}}"#, "invalid_video"),
                (#"{"name":"r","canvas":{"background":"red"}}"#, "invalid_canvas"),
                (#"{"name":"r","outputs":[{"url":"file:///tmp/a.flv","queueMs":5}]}"#, "invalid_output"),
                (
                    #"{"name":"r","layout":{"mode":"custom","regions":[{"userId":"a","x":5000,"y":0,"width":8,"height":8}]}}"#,
                    "invalid_layout"
                ),
                (#"{"name":"r","layout":{"mode":"spiral"}}"#, "invalid_layout"),
                (#"{"name":"r","canvas":{"fps":500}}"#, "limit_exceeded"),
                (#"{"name":"r","canvas":{"width":321}}"#, "limit_exceeded"),
                (#"{"name":"r","audio":{"channels":6}}"#, "limit_exceeded"),
                (
                    #"{"name":"r","outputs":[\#(Array(repeating: #"{"url":"file:///tmp/a.flv"}"#, count: 9).joined(separator: ","))]}"#,
                    "limit_exceeded"
                ),
            ]
            for (body, code) in cases {
                let answer = try s.call("POST", "/v1/rooms", token: root, json: body)
                #expect(answer.status == 400 && answer.errorCode == code, "\(body) -> \(answer.status) \(answer.text)")
            }
            let fps = try s.call("POST", "/v1/rooms", token: root, json: #"{"name":"r","canvas":{"fps":500}}"#)
            #expect(fps.text.contains("canvas.fps must be within 1...60, got 500"), "\(fps.text)")
            let long = String(repeating: "a", count: 65)
            #expect(try s.call("GET", "/v1/rooms/\(long)", token: root).errorCode == "invalid_room")
            #expect(try s.call("DELETE", "/v1/rooms/\(long)", token: root).errorCode == "invalid_room")
            #expect(try s.call("GET", "/v1/rooms/\(long)/snapshot", token: root).errorCode == "invalid_room")
            #expect(try s.call("GET", "/v1/rooms/nope", token: root).errorCode == "not_found")
            #expect(try s.call("DELETE", "/v1/rooms/nope", token: root).errorCode == "not_found")
        }

        @Test func anAudioOnlyRoomHasNoSnapshot() throws {
            let s = try conformanceServer()
            let created = try s.call(
                "POST", "/v1/rooms", token: s.root,
                json: #"{"name":"ao","audioOnly":true,"audio":{"preset":"high1","channels":1}}"#)
            #expect(created.status == 201 && created.json?["video"] == nil)
            #expect((created.json?["audio"] as? [String: Any])?["bitrate"] as? Int == 64)
            let snapshot = try s.call("GET", "/v1/rooms/ao/snapshot", token: s.root)
            #expect(snapshot.status == 409 && snapshot.errorCode == "audio_only")
            #expect(try s.call("DELETE", "/v1/rooms/ao", token: s.root).status == 204)
        }

        /// "type userId reason" of each event, without the periodic ones (voice levels, speaker changes, output status).
        static func roomEvents(_ texts: [String]) -> [String] {
            RoomServiceTests.types(texts).filter {
                !["voice_levels", "active_speaker", "output_status"].contains(String($0.prefix { $0 != " " }))
            }
        }

        /// `"key":"value"` of a flat JSON event.
        static func field(_ key: String, of json: String) -> String? {
            ((try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any])?[key] as? String
        }
    }
}
