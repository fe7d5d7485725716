import Foundation
import Testing
import TestSupport

extension EndToEnd {
    /// Layout changes while participants stream: every pulled frame is one layout whole, and a newcomer's tile
    /// shows the placeholder (never black, never decoder garbage) until its first picture.
    @Suite struct LayoutSwitchTests {
        // 1280×720 canvas, pulled back scaled to 320×180 (÷4) so every frame is cheap to read.
        static let users: [(id: String, colour: String, rgb: (Int, Int, Int))] = [
            ("alice", "red", (255, 0, 0)), ("bob", "lime", (0, 255, 0)), ("carol", "blue", (0, 0, 255)),
        ]
        static let background = (128, 128, 128)
        static let placeholder = (48, 48, 48)
        static let dave = (id: "dave", colour: "yellow", rgb: (255, 255, 0))

        /// Sample points (in the ÷4 picture) and the colour each layout puts there.
        /// grid, 3 users: 2×2 cells of 640×360, the fourth cell background. pip, anchor alice: alice full canvas,
        /// bob 320×180 at (944, 524), carol above him at (944, 328).
        static let points = [(80, 45), (240, 45), (80, 135), (200, 135), (276, 153), (276, 104)]

        static func classify(_ rgb: [UInt8]) -> String? {
            let a = users[0].rgb, b = users[1].rgb, c = users[2].rgb, bg = background
            let grid = [a, b, c, bg, bg, bg]
            let pip = [a, a, a, a, b, c]
            func matches(_ expected: [(Int, Int, Int)]) -> Bool {
                zip(points, expected).allSatisfy { point, colour in near(rgb, x: point.0, y: point.1, colour) }
            }
            if matches(grid) { return "grid" }
            if matches(pip) { return "pip" }
            return nil
        }

        static func near(_ rgb: [UInt8], x: Int, y: Int, _ c: (Int, Int, Int), width: Int = 320) -> Bool {
            let i = (y * width + x) * 3
            guard i + 2 < rgb.count else { return false }
            return abs(Int(rgb[i]) - c.0) <= 40 && abs(Int(rgb[i + 1]) - c.1) <= 40 && abs(Int(rgb[i + 2]) - c.2) <= 40
        }

        static func describe(_ rgb: [UInt8], x: Int, y: Int) -> String {
            let i = (y * 320 + x) * 3
            return "(\(rgb[i]),\(rgb[i + 1]),\(rgb[i + 2]))"
        }

        @Test func layoutSwitchesAreWholeFramesAndANewcomerShowsThePlaceholderUntilItsFirstPicture() async throws {
            let nginx = try NginxRTMP()
            defer { nginx.stop() }
            let cohost = try CohostHarness()
            let room = "switch1"
            let admin = cohost.token(room: room, user: "producer", admin: true)
            let file = FileManager.default.temporaryDirectory.appendingPathComponent(
                "cohost-levels-\(UUID().uuidString).flv"
            ).path
            defer { try? FileManager.default.removeItem(atPath: file) }
            let create = #"""
                {"name":"\#(room)","anchor":"alice","canvas":{"width":1280,"height":720,"fps":30,"background":"#808080",
                 "placeholder":"#303030"},"video":{"bitrate":1500,"keyint":1},"layout":{"mode":"grid"},
                 "outputs":[{"url":"\#(nginx.url(stream: room))"},{"url":"file://\#(file)"}]}
                """#
            // Encoded before joining and sent from files: encoding live on a busy machine, ffmpeg fell behind the clock,
            // and its voices' gaps read as voice levels of 0 below (its pictures, late for their sound, also moved
            // lip-sync's voice delay).
            let clips = try Self.users.enumerated().map { i, u in
                try ffmpegParticipant(
                    rtpPort: cohost.rtpPort, colour: u.colour, toneHz: 300 + 200 * i,
                    audioSSRC: UInt32(3000 + i), videoSSRC: UInt32(4000 + i)
                ).prerendered(seconds: 25)
            }
            defer { clips.forEach { $0.removeClip() } }
            _ = try createRoomWithOutputs(cohost, admin: admin, body: create)
            var senders: [ManagedProcess] = []
            defer { senders.forEach { $0.terminate() } }
            for (i, (u, clip)) in zip(Self.users, clips).enumerated() {
                try joinRoom(cohost, room: room, user: u.id, audioSSRC: UInt32(3000 + i), videoSSRC: UInt32(4000 + i))
                senders.append(try clip.start())
            }
            try await Task.sleep(for: .seconds(2))

            // Pull 13 s while the layout flips every 700 ms; then a newcomer joins and starts sending 1.5 s later
            // (about 7.2 s in: the rest leaves a slow machine time to start his ffmpeg and show his picture).
            let url = nginx.url(stream: room)
            let pull = Task.detached { try pullProgramme(url: url, seconds: 13) }
            try await Task.sleep(for: .milliseconds(1500))  // the pull's ffmpeg connects first, so it sees every flip
            for i in 0..<6 {
                let body = i % 2 == 0 ? #"{"mode":"pip"}"# : #"{"mode":"grid"}"#
                let put = try cohost.call("PUT", "/v1/rooms/\(room)/layout", token: admin, body: Data(body.utf8))
                #expect(put.status == 200, "\(String(decoding: put.body, as: UTF8.self))")
                try await Task.sleep(for: .milliseconds(700))
            }
            try joinRoom(cohost, room: room, user: Self.dave.id, audioSSRC: 3010, videoSSRC: 4010)
            try await Task.sleep(for: .milliseconds(1500))
            senders.append(
                try startFFmpegParticipant(
                    rtpPort: cohost.rtpPort, colour: Self.dave.colour, toneHz: 1200,
                    audioSSRC: 3010, videoSSRC: 4010))
            let pulled = try await pull.value

            let frames = try decodeVideoFramesRGB(path: pulled, width: 320, height: 180, fps: 30)
            #expect(frames.count >= 200, "only \(frames.count) frames pulled")
            var seen: [String] = []
            var newcomer: [String] = []
            for (n, rgb) in frames.enumerated() {
                // dave is the fourth grid cell: from his join on, that cell is his placeholder or his picture (sampled
                // near its top-left corner: his card has his name in the middle).
                if Self.near(rgb, x: 176, y: 102, Self.placeholder) {
                    newcomer.append("placeholder")
                    continue
                }
                if Self.near(rgb, x: 176, y: 102, Self.dave.rgb) {
                    newcomer.append("picture")
                    continue
                }
                guard let layout = Self.classify(rgb) else {
                    let samples: [String] = Self.points.map { Self.describe(rgb, x: $0.0, y: $0.1) }
                    Issue.record("frame \(n) is neither whole grid nor whole pip: \(samples.joined(separator: " "))")
                    continue
                }
                if seen.last != layout { seen.append(layout) }
            }
            #expect(seen.count >= 5, "layouts seen in order: \(seen)")
            #expect(newcomer.first == "placeholder", "the newcomer's cell: \(newcomer.prefix(5))")
            #expect(newcomer.filter { $0 == "placeholder" }.count >= 20, "placeholder frames: \(newcomer.count)")
            #expect(newcomer.last == "picture", "the newcomer's picture never showed")
            // Once the picture is up it stays: no placeholder flicker.
            if let first = newcomer.firstIndex(of: "picture") {
                #expect(!newcomer[first...].contains("placeholder"), "placeholder came back after the first picture")
            }

            // Voice levels travel in the pulled programme as SEI (nginx-rtmp drops custom data messages)...
            let messages = try Self.seiVoiceLevels(FLVProbe.tags(path: pulled))
            #expect(messages.count >= 30, "only \(messages.count) SEI voice-level messages in 13 s")
            let late = messages.suffix(10)
            for u in Self.users {
                // lavfi's sine is 1/8 of full scale: about −21 dBov, level ≈ 65.
                let levels = late.compactMap { ($0["levels"] as? [String: Int])?[u.id] }
                #expect(
                    levels.count == late.count && levels.allSatisfy { (55...75).contains($0) }, "\(u.id): \(levels)")
            }
            // Every 200 ms of room time; a picture encoded late on a loaded machine carries the newest levels only, so a
            // step may be a multiple of 200, but nearly all are one.
            let times = messages.compactMap { $0["time"] as? Int }
            let steps = zip(times, times.dropFirst()).map { $1 - $0 }
            #expect(steps.allSatisfy { $0 > 0 && $0 % 200 == 0 }, "SEI times \(times.prefix(12))")
            #expect(steps.filter { $0 == 200 }.count * 10 >= steps.count * 9, "SEI steps \(steps)")
            // ...and as onVoiceLevels data messages in the FLV file output.
            let _ = try cohost.call("DELETE", "/v1/rooms/\(room)", token: admin)
            let name: [UInt8] = [0x02, 0x00, 0x0D] + Array("onVoiceLevels".utf8)
            let scripts = try FLVProbe.tags(path: file).filter { $0.isScript && $0.body.starts(with: name) }
            #expect(scripts.count >= 40, "only \(scripts.count) onVoiceLevels messages in the file")
            #expect(
                scripts.suffix(5).allSatisfy { tag in
                    Self.users.allSatisfy { Self.find(Array($0.id.utf8), in: tag.body) }
                })
        }

        static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Bool {
            guard !needle.isEmpty, haystack.count >= needle.count else { return false }
            return (0...(haystack.count - needle.count)).contains { Array(haystack[$0..<$0 + needle.count]) == needle }
        }

        /// The JSON of every Cohost voice-levels SEI (user data unregistered, UUID "CohostVoiceLevel") in the video tags.
        static func seiVoiceLevels(_ tags: [FLVTagInfo]) -> [[String: Any]] {
            let uuid = Array("CohostVoiceLevel".utf8)
            var out: [[String: Any]] = []
            for tag in tags where tag.isVideo && !tag.isSequenceHeader && tag.body.count > 5 {
                var i = 5
                let b = tag.body
                while i + 4 <= b.count {
                    let n = Int(b[i]) << 24 | Int(b[i + 1]) << 16 | Int(b[i + 2]) << 8 | Int(b[i + 3])
                    let start = i + 4
                    guard n > 0, start + n <= b.count else { break }
                    if b[start] & 0x1F == 6, n > 3, b[start + 1] == 5 {
                        var j = start + 2, size = 0
                        while j < start + n, b[j] == 255 {
                            size += 255
                            j += 1
                        }
                        if j < start + n {
                            size += Int(b[j])
                            j += 1
                        }
                        if size > 16, j + size <= start + n, Array(b[j..<j + 16]) == uuid,
                            let json = try? JSONSerialization.jsonObject(with: Data(b[(j + 16)..<(j + size)]))
                                as? [String: Any]
                        {
                            out.append(json)
                        }
                    }
                    i = start + n
                }
            }
            return out
        }
    }
}
