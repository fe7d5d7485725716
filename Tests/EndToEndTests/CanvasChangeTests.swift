import Foundation
import Testing
import TestSupport

extension EndToEnd {
    /// A show that turns from a 16:9 stream to a 9:16 phone stream without closing the room: the programme switches
    /// size at a keyframe, the RTMP output stays connected, the layout follows the canvas.
    @Suite struct CanvasChangeTests {
        @Test func aCanvasPatchedFrom1280x720To720x1280ReachesTheRTMPServerInOneSession() async throws {
            let nginx = try NginxRTMP(record: true)
            defer { nginx.stop() }
            let cohost = try CohostHarness()
            let room = "turn"
            let admin = cohost.token(room: room, user: "producer", admin: true)
            let create = """
                {"name":"\(room)","canvas":{"width":1280,"height":720,"fps":15},"video":{"bitrate":1200,"keyint":1},
                 "layout":{"mode":"custom","regions":[
                   {"userId":"ann","x":0,"y":0,"width":1280,"height":720},
                   {"userId":"ann","x":944,"y":524,"width":320,"height":180,"z":1}]},
                 "outputs":[{"url":"\(nginx.url(stream: room))"}]}
                """
            let created = try cohost.call("POST", "/v1/rooms", token: admin, body: Data(create.utf8))
            #expect(created.status == 201, "\(String(decoding: created.body, as: UTF8.self))")
            #expect(
                try cohost.call(
                    "POST", "/v1/rooms/\(room)/participants", token: cohost.token(room: room, user: "ann"),
                    body: Data(CohostHarness.offer(audioSSRC: 4200, videoSSRC: 4201).utf8),
                    contentType: "application/sdp"
                ).status == 201)
            let sender = try startFFmpegParticipant(
                rtpPort: cohost.rtpPort, colour: "green", toneHz: 440, audioSSRC: 4200, videoSSRC: 4201)
            defer { sender.terminate() }

            func info() throws -> [String: Any] {
                try JSONSerialization.jsonObject(with: try cohost.call("GET", "/v1/rooms/\(room)", token: admin).body)
                    as? [String: Any] ?? [:]
            }
            func output() throws -> [String: Any] { (try info()["outputs"] as? [[String: Any]])?.first ?? [:] }
            func sent() throws -> Int { try output()["sentBytes"] as? Int ?? 0 }
            #expect(await eventually(seconds: 15) { (try? output()["state"] as? String) == "connected" })
            #expect(await eventually(seconds: 15) { (try? sent()) ?? 0 > 150_000 })

            let patched = try cohost.call(
                "PATCH", "/v1/rooms/\(room)", token: admin, body: Data(#"{"canvas":{"width":720,"height":1280}}"#.utf8))
            #expect(patched.status == 200, "\(String(decoding: patched.body, as: UTF8.self))")
            let answer = try JSONSerialization.jsonObject(with: patched.body) as? [String: Any] ?? [:]
            let canvas = answer["canvas"] as? [String: Any] ?? [:]
            #expect(canvas["width"] as? Int == 720 && canvas["height"] as? Int == 1280, "\(canvas)")
            // The layout followed: the full-canvas region fills the tall canvas, the small one keeps its corner.
            let regions = (answer["layout"] as? [String: Any])?["regions"] as? [[String: Any]] ?? []
            let rects = regions.map { r in ["x", "y", "width", "height"].map { r[$0] as? Int ?? -1 } }
            #expect(rects == [[0, 0, 720, 1280], [532, 932, 180, 320]], "\(rects)")

            let before = try sent()
            #expect(await eventually(seconds: 15) { (try? sent()) ?? 0 > before + 150_000 })
            let png = try cohost.call("GET", "/v1/rooms/\(room)/snapshot", token: admin).body
            #expect(try decodePNGWithFFmpeg([UInt8](png)).count == 720 * 1280 * 3)
            let after = try output()
            #expect(after["state"] as? String == "connected" && after["reconnects"] as? Int == 0, "\(after)")

            // A frame rate or a size under a container that fixes it: refused, nothing changed.
            let fps = try cohost.call(
                "PATCH", "/v1/rooms/\(room)", token: admin, body: Data(#"{"canvas":{"fps":30}}"#.utf8))
            #expect(fps.status == 409 && String(decoding: fps.body, as: UTF8.self).contains("canvas_fixed"))
            let kept = try info()["canvas"] as? [String: Any] ?? [:]
            #expect(kept["fps"] as? Int == 15 && kept["width"] as? Int == 720, "\(kept)")

            // Closing the room ends the publish; nginx recorded one session (a second publish overwrites the file).
            #expect(try cohost.call("DELETE", "/v1/rooms/\(room)", token: admin).status == 204)
            let probe = try run(
                "ffprobe",
                [
                    "-v", "error", "-select_streams", "v", "-show_entries", "frame=width,height", "-of", "csv=p=0",
                    nginx.recordingPath(stream: room),
                ], timeout: 60)
            let sizes = Set(String(decoding: probe.stdout, as: UTF8.self).split(separator: "\n").map(String.init))
            #expect(sizes.contains("1280,720") && sizes.contains("720,1280"), "sizes in the recording: \(sizes)")
        }
    }
}
