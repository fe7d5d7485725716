import Foundation
import Testing
import TestSupport

extension EndToEnd {
    /// Names on the programme: a tile's label where the layout puts it, on the pulled RTMP stream; a card with the
    /// name when the camera goes off; the display name given at join in the room's list.
    @Suite struct ProgrammeLabelTests {
        static let placeholder = (48, 48, 48)

        @Test func aLabelIsOnThePulledProgrammeAtItsPlaceAndACameraTurnedOffShowsTheCardWithinASecond() async throws {
            let nginx = try NginxRTMP()
            defer { nginx.stop() }
            let cohost = try CohostHarness()
            let room = "labels"
            let admin = cohost.token(room: room, user: "producer", admin: true)
            // One region over the whole 640×360 canvas; the label white on an opaque black box, bottom left.
            let create = ##"""
                {"name":"\##(room)","canvas":{"width":640,"height":360,"fps":15,"placeholder":"#303030"},
                 "video":{"bitrate":1200,"keyint":1},
                 "layout":{"mode":"custom","regions":[{"userId":"ann","x":0,"y":0,"width":640,"height":360,
                   "label":{"text":"ANN LEE","position":"bottom-left","size":40,"color":"#ffffff","background":"#000000"}}]},
                 "outputs":[{"url":"\##(nginx.url(stream: room))"}]}
                """##
            let created = try cohost.call("POST", "/v1/rooms", token: admin, body: Data(create.utf8))
            #expect(created.status == 201, "\(String(decoding: created.body, as: UTF8.self))")
            let joined = try cohost.call(
                "POST", "/v1/rooms/\(room)/participants?name=%E5%AE%89%E5%A8%9C%20Ann",
                token: cohost.token(room: room, user: "ann"),
                body: Data(CohostHarness.offer(audioSSRC: 4100, videoSSRC: 4101).utf8), contentType: "application/sdp")
            #expect(joined.status == 201)
            let sender = try startFFmpegParticipant(
                rtpPort: cohost.rtpPort, colour: "blue", toneHz: 500, audioSSRC: 4100, videoSSRC: 4101)
            defer { sender.terminate() }
            #expect(
                await eventually(seconds: 15) {
                    framesDecoded(cohost, room: room, admin: admin, user: "ann", kind: "video") > 15
                })
            let info =
                try JSONSerialization.jsonObject(
                    with: try cohost.call("GET", "/v1/rooms/\(room)", token: admin).body) as? [String: Any]
            let people = info?["participants"] as? [[String: Any]] ?? []
            #expect(people.first?["name"] as? String == "安娜 Ann", "\(people)")

            // The last picture of a 3 s pull: blue everywhere but the label's box in the bottom-left corner, its
            // margin 8 px (a 40th of 360, even) from the edges.
            let pulled = try pullProgramme(url: nginx.url(stream: room), seconds: 3)
            let frame = try #require(try decodeVideoFramesRGB(path: pulled, width: 640, height: 360, fps: 5).last)
            func pixel(_ x: Int, _ y: Int) -> (Int, Int, Int) {
                let i = (y * 640 + x) * 3
                return (Int(frame[i]), Int(frame[i + 1]), Int(frame[i + 2]))
            }
            func isBlue(_ p: (Int, Int, Int)) -> Bool { p.2 > 150 && p.0 < 70 && p.1 < 70 }
            func isBlack(_ p: (Int, Int, Int)) -> Bool { p.0 < 45 && p.1 < 45 && p.2 < 45 }
            func isWhite(_ p: (Int, Int, Int)) -> Bool { p.0 > 200 && p.1 > 200 && p.2 > 200 }
            #expect(isBlue(pixel(600, 40)), "\(pixel(600, 40))")
            #expect(isBlue(pixel(320, 180)), "\(pixel(320, 180))")
            #expect(isBlue(pixel(4, 348)), "outside the margin: \(pixel(4, 348))")
            #expect(isBlack(pixel(12, 348)), "the box's padding: \(pixel(12, 348))")
            var white = 0, black = 0, blue = 0
            for y in 270..<352 {
                for x in 8..<400 {
                    let p = pixel(x, y)
                    if isWhite(p) { white += 1 } else if isBlack(p) { black += 1 } else if isBlue(p) { blue += 1 }
                }
            }
            // "ANN LEE" at 40 px: a few thousand inked pixels on a box of about 200×60.
            #expect(white > 800, "white \(white), black \(black), blue \(blue)")
            #expect(black > 4000, "white \(white), black \(black), blue \(blue)")
            #expect(blue > 8000, "the box ends after the text: white \(white), black \(black), blue \(blue)")

            // Camera off: the card (the placeholder, the name centred in white, no label box) within a second.
            let started = Date()
            let patched = try cohost.call(
                "PATCH", "/v1/rooms/\(room)/participants/ann", token: admin, body: Data(#"{"camera":false}"#.utf8))
            #expect(patched.status == 204, "\(String(decoding: patched.body, as: UTF8.self))")
            // Snapshots are taken for 1.5 s first and decoded after (ffmpeg is slow on a busy machine): each is timed
            // by its request, so the first one showing the card bounds when it came.
            var taken: [(asked: Double, png: Data)] = []
            while Date().timeIntervalSince(started) < 1.5 {
                let asked = Date().timeIntervalSince(started)
                taken.append((asked, try cohost.call("GET", "/v1/rooms/\(room)/snapshot", token: admin).body))
                try await Task.sleep(for: .milliseconds(50))
            }
            var card: (elapsed: Double, centreWhite: Int, corner: (Int, Int, Int))?
            for (asked, png) in taken where card == nil {
                let rgb = try decodePNGWithFFmpeg([UInt8](png))
                guard rgb.count == 640 * 360 * 3 else { continue }
                func at(_ x: Int, _ y: Int) -> (Int, Int, Int) {
                    let i = (y * 640 + x) * 3
                    return (Int(rgb[i]), Int(rgb[i + 1]), Int(rgb[i + 2]))
                }
                let grey = at(100, 40)
                guard abs(grey.0 - 48) < 10, abs(grey.1 - 48) < 10, abs(grey.2 - 48) < 10 else { continue }
                var centreWhite = 0
                for y in 150..<210 {
                    for x in 160..<480 where at(x, y).0 > 200 && at(x, y).2 > 200 { centreWhite += 1 }
                }
                card = (asked, centreWhite, at(12, 348))
            }
            let shown = try #require(card, "no card in the snapshots of the first 1.5 s (\(taken.count) taken)")
            #expect(shown.elapsed < 1.0, "the card came after \(shown.elapsed) s")
            #expect(shown.centreWhite > 300, "the name is not centred on the card: \(shown.centreWhite) white pixels")
            #expect(abs(shown.corner.0 - 48) < 10, "the label's box is still drawn on the card: \(shown.corner)")

            // With an HLS output (its segments fix the picture size) the canvas keeps its size; its colours may change.
            let hls = try cohost.call(
                "POST", "/v1/rooms/\(room)/outputs", token: admin, body: Data(#"{"kind":"hls"}"#.utf8))
            #expect(hls.status == 201, "\(String(decoding: hls.body, as: UTF8.self))")
            let resized = try cohost.call(
                "PATCH", "/v1/rooms/\(room)", token: admin, body: Data(#"{"canvas":{"width":720,"height":1280}}"#.utf8))
            #expect(resized.status == 409)
            #expect(String(decoding: resized.body, as: UTF8.self).contains(#""code":"canvas_fixed""#))
            let recoloured = try cohost.call(
                "PATCH", "/v1/rooms/\(room)", token: admin, body: Data(##"{"canvas":{"background":"#102030"}}"##.utf8))
            #expect(recoloured.status == 200, "\(String(decoding: recoloured.body, as: UTF8.self))")
            let answer = try JSONSerialization.jsonObject(with: recoloured.body) as? [String: Any]
            let canvas = answer?["canvas"] as? [String: Any] ?? [:]
            #expect(canvas["background"] as? String == "#102030" && canvas["width"] as? Int == 640, "\(canvas)")
        }
    }
}
