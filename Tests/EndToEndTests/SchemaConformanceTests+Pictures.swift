import Foundation
import Testing
import Rooms
import TestSupport

/// Room pictures and anchor: set at creation, changed and removed with PATCH, refused with their codes.
extension EndToEnd.SchemaConformanceTests {
    /// A PNG made by ffmpeg (a real encoder, not ours): `colour` at `width`×`height`, RGBA.
    static func png(colour: String, width: Int, height: Int) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("cohost-\(UUID().uuidString).png").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let made = try run(
            "ffmpeg",
            [
                "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "color=c=\(colour):s=\(width)x\(height)",
                "-frames:v", "1", "-pix_fmt", "rgba", "-y", path,
            ], timeout: 20)
        guard made.status == 0, let data = FileManager.default.contents(atPath: path) else {
            throw HarnessError("ffmpeg could not make a PNG: \(made.stderr)")
        }
        return data.base64EncodedString()
    }

    @Test func picturesAndAnchorAreSetPatchedAndRefusedWithTheirCodes() throws {
        let s = try conformanceServer()
        let red = try Self.png(colour: "red", width: 64, height: 32)
        let blue = try Self.png(colour: "blue", width: 16, height: 16)
        let created = try s.call(
            "POST", "/v1/rooms", token: s.root,
            json: #"""
                {"name":"pics","video":{"bitrate":100},"anchor":"alice",
                 "canvas":{"width":160,"height":96,"fps":5,"backgroundImage":"\#(red)"},
                 "watermark":{"image":"\#(blue)","x":140,"y":4,"width":16,"height":16,"opacity":0.5}}
                """#)
        #expect(created.status == 201, "\(created.text.prefix(300))")
        defer { _ = try? s.call("DELETE", "/v1/rooms/pics", token: s.root) }
        let canvas = created.json?["canvas"] as? [String: Any]
        #expect((canvas?["backgroundImage"] as? [String: Any])?["width"] as? Int == 64)
        #expect(created.json?["anchor"] as? String == "alice")
        #expect((created.json?["watermark"] as? [String: Any])?["opacity"] as? Double == 0.5)

        // The canvas shows the picture: with nobody in the room it is all background image (red).
        Thread.sleep(forTimeInterval: 0.5)
        let snapshot = try s.call("GET", "/v1/rooms/pics/snapshot", token: s.root)
        #expect(snapshot.status == 200)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("cohost-snap-\(UUID().uuidString).png")
            .path
        defer { try? FileManager.default.removeItem(atPath: file) }
        #expect(FileManager.default.createFile(atPath: file, contents: Data(snapshot.body)), "could not write \(file)")
        let rgb = try decodeFirstVideoFrameRGB(path: file, width: 160, height: 96)
        expectColour(rgb, width: 160, x: 40, y: 48, (255, 0, 0), "background image")
        // The watermark: blue at half opacity over red.
        expectColour(rgb, width: 160, x: 148, y: 12, (128, 0, 128), "watermark")

        let patched = try s.call(
            "PATCH", "/v1/rooms/pics", token: s.root,
            json: #"{"anchor":"bob","placeholderImage":"\#(blue)","backgroundImage":null}"#)
        #expect(patched.status == 200, "\(patched.text.prefix(300))")
        let after = patched.json?["canvas"] as? [String: Any]
        #expect(patched.json?["anchor"] as? String == "bob")
        #expect(
            after?["backgroundImage"] == nil && (after?["placeholderImage"] as? [String: Any])?["width"] as? Int == 16)
        let cleared = try s.call("PATCH", "/v1/rooms/pics", token: s.root, json: #"{"anchor":null,"watermark":null}"#)
        #expect(cleared.status == 200 && cleared.json?["anchor"] == nil && cleared.json?["watermark"] == nil)

        for (body, code) in [
            (#"{"backgroundImage":"%%%"}"#, "invalid_image"),
            (#"{"backgroundImage":"aGVsbG8="}"#, "invalid_image"),
            (#"{"watermark":{"image":"\#(blue)","x":0,"y":0,"width":16,"height":16,"opacity":2}}"#, "invalid_image"),
            (#"{"watermark":{"image":"\#(blue)","x":500,"y":0,"width":16,"height":16}}"#, "invalid_image"),
            (#"{"anchor":"not ok"}"#, "invalid_room"),
            (#"{"anchor":5}"#, "invalid_json"),
        ] {
            let refused = try s.call("PATCH", "/v1/rooms/pics", token: s.root, json: body)
            #expect(refused.status == 400 && refused.errorCode == code, "\(body.prefix(60)): \(refused.text)")
        }
        #expect(try s.call("PATCH", "/v1/rooms/nope", token: s.root, json: "{}").status == 404)
        let participant = s.harness.token(room: "pics", user: "alice")
        #expect(try s.call("PATCH", "/v1/rooms/pics", token: participant, json: "{}").errorCode == "forbidden")

        #expect(
            try s.call("POST", "/v1/rooms", token: s.root, json: #"{"name":"pics-voice","audioOnly":true}"#).status
                == 201)
        defer { _ = try? s.call("DELETE", "/v1/rooms/pics-voice", token: s.root) }
        let voice = try s.call("PATCH", "/v1/rooms/pics-voice", token: s.root, json: #"{"backgroundImage":"\#(red)"}"#)
        #expect(voice.status == 409 && voice.errorCode == "audio_only")
        #expect(try s.call("PATCH", "/v1/rooms/pics-voice", token: s.root, json: #"{"anchor":"host"}"#).status == 200)
    }
}
