import Foundation
import Testing
import TestSupport

extension EndToEnd {
    /// The programme as HLS served by Cohost: a participant burns its capture time into its picture, the test plays
    /// the room's playlist as a Low-Latency HLS client does (blocking reloads, parts) and as a plain HLS client does,
    /// decodes what it got with ffmpeg and reads the time back; each playlist is checked against the spec's rules.
    @Suite struct HLSOutputTests {
        /// A room whose one region shows `user` at 1:1 on a 640×360 canvas, with an HLS output of `hls` settings.
        static func makeRoom(_ cohost: CohostHarness, room: String, admin: String, hls: String) throws {
            let create = """
                {"name":"\(room)","canvas":{"width":640,"height":360,"fps":30},"returnVideo":"none",
                 "layout":{"mode":"custom","regions":[{"userId":"a","x":0,"y":0,"width":640,"height":360}]},
                 "outputs":[{"kind":"hls",\(hls)}]}
                """
            let made = try cohost.call("POST", "/v1/rooms", token: admin, body: Data(create.utf8))
            #expect(made.status == 201, "\(String(decoding: made.body, as: UTF8.self))")
        }

        /// A participant "a" sending its capture time in its picture.
        static func burningSender(_ cohost: CohostHarness, room: String, ssrc: UInt32) throws -> ConferenceClient {
            let client = try ConferenceClient(serverPort: cohost.rtpPort, audioSSRC: ssrc, toneHz: 440)
            client.sendVideo(width: 640, height: 360, fps: 30, bitrateKbps: 1500) { frame, ms in
                BurnedTime.draw(&frame, ms)
            }
            let offer = client.offer(direction: "sendrecv", video: .vp8, videoDirection: "sendonly")
            let joined = try cohost.call(
                "POST", "/v1/rooms/\(room)/participants", token: cohost.token(room: room, user: "a"),
                body: Data(offer.utf8), contentType: "application/sdp")
            #expect(joined.status == 201, "\(String(decoding: joined.body, as: UTF8.self))")
            _ = try client.accept(answer: String(decoding: joined.body, as: UTF8.self))
            client.start()
            return client
        }

        /// The burned-in time of the last picture of `media` (an init section and fragments).
        static func lastCode(_ media: Data) throws -> Int? {
            let path = NSTemporaryDirectory() + "cohost-hls-e2e-\(UUID().uuidString).mp4"
            defer { try? FileManager.default.removeItem(atPath: path) }
            try media.write(to: URL(fileURLWithPath: path))
            let result = try run(
                "ffmpeg",
                ["-v", "error", "-nostdin", "-i", path, "-f", "rawvideo", "-pix_fmt", "gray", "-s", "640x360", "-"],
                timeout: 20)
            #expect(result.status == 0, "ffmpeg: \(result.stderr)")
            let size = 640 * 360
            guard result.stdout.count >= size else { return nil }
            return BurnedTime.read(luma: result.stdout[(result.stdout.count - size)...])
        }

        /// A media playlist, its tags checked against RFC 8216bis as far as this test reads them.
        struct Playlist {
            var targetDuration = 0
            var partTarget: Double?
            var mediaSequence = -1
            var segments: [(uri: String, duration: Double, date: Date?)] = []
            /// Parts of the last segments, by URI, with the media sequence number of their segment.
            var parts: [(msn: Int, uri: String, duration: Double)] = []
            var hint: String?
            var problems: [String] = []

            init(_ text: String) {
                var date: Date?
                var msn = 0
                let formatter = ISO8601DateFormatter()
                formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
                func attribute(_ line: Substring, _ name: String) -> String? {
                    guard let range = line.range(of: name + "=") else { return nil }
                    let rest = line[range.upperBound...]
                    if rest.first == "\"" { return String(rest.dropFirst().prefix { $0 != "\"" }) }
                    return String(rest.prefix { $0 != "," })
                }
                let lines = text.split(separator: "\n")
                if lines.first != "#EXTM3U" { problems.append("no #EXTM3U first") }
                var pendingDuration: Double?
                for line in lines {
                    if line.hasPrefix("#EXT-X-TARGETDURATION:") {
                        targetDuration = Int(line.dropFirst(22)) ?? 0
                    } else if line.hasPrefix("#EXT-X-PART-INF:") {
                        partTarget = attribute(line, "PART-TARGET").flatMap(Double.init)
                    } else if line.hasPrefix("#EXT-X-MEDIA-SEQUENCE:") {
                        mediaSequence = Int(line.dropFirst(22)) ?? -1
                        msn = mediaSequence
                    } else if line.hasPrefix("#EXT-X-PROGRAM-DATE-TIME:") {
                        date = formatter.date(from: String(line.dropFirst(25)))
                        if date == nil { problems.append("bad date \(line)") }
                    } else if line.hasPrefix("#EXT-X-PART:") {
                        let duration = attribute(line, "DURATION").flatMap(Double.init) ?? -1
                        parts.append((msn, attribute(line, "URI") ?? "", duration))
                    } else if line.hasPrefix("#EXTINF:") {
                        pendingDuration = Double(line.dropFirst(8).prefix { $0 != "," })
                    } else if line.hasPrefix("#EXT-X-PRELOAD-HINT:") {
                        hint = attribute(line, "URI")
                    } else if !line.hasPrefix("#"), let duration = pendingDuration {
                        segments.append((String(line), duration, date))
                        pendingDuration = nil
                        date = nil
                        msn += 1
                    }
                }
                if targetDuration <= 0 { problems.append("no target duration") }
                for segment in segments where Int(segment.duration.rounded()) > targetDuration {
                    problems.append("\(segment.uri) lasts \(segment.duration) s, over the target \(targetDuration)")
                }
                for (index, segment) in segments.enumerated() {
                    if !segment.uri.hasPrefix("s\(mediaSequence + index).m4s") {
                        problems.append("segment \(index) is \(segment.uri), not number \(mediaSequence + index)")
                    }
                    if segment.date == nil { problems.append("\(segment.uri) has no EXT-X-PROGRAM-DATE-TIME") }
                }
                for (a, b) in zip(segments, segments.dropFirst()) {
                    if let da = a.date, let db = b.date, abs(db.timeIntervalSince(da) - a.duration) > 0.1 {
                        problems.append("\(b.uri)'s date is not \(a.uri)'s plus its duration")
                    }
                }
                if let partTarget {
                    for part in parts where part.duration > partTarget + 0.0005 {
                        problems.append("\(part.uri) lasts \(part.duration) s, over the part target \(partTarget)")
                    }
                    if !text.contains("CAN-BLOCK-RELOAD=YES") { problems.append("no blocking reload") }
                    if hint == nil { problems.append("no preload hint") }
                }
            }
        }

        @Test func aLowLatencyHLSClientSeesTheSenderWithin2_5sAndAPlainOneWithin8s() async throws {
            let cohost = try CohostHarness()
            let admin = cohost.token(room: "*", user: "producer", admin: true)
            try Self.makeRoom(cohost, room: "llhls", admin: admin, hls: #""segmentSeconds":2,"partSeconds":0.333"#)
            try Self.makeRoom(cohost, room: "plainhls", admin: admin, hls: #""partSeconds":0,"public":true"#)
            let sender = try Self.burningSender(cohost, room: "llhls", ssrc: 71_000)
            let plainSender = try Self.burningSender(cohost, room: "plainhls", ssrc: 72_000)
            defer {
                sender.stop()
                plainSender.stop()
            }
            let viewer = cohost.token(room: "llhls", user: "watcher", viewer: true)
            let base = "/v1/rooms/llhls/hls/"
            func get(_ name: String, _ query: String = "") throws -> (status: Int, body: Data) {
                let answer = try cohost.call("GET", base + name + "?token=\(viewer)" + query, token: nil)
                return (answer.status, answer.body)
            }

            // Low-Latency HLS: each blocking reload asks for the part after the newest one listed.
            var playlist = Playlist("")
            #expect(
                await eventually(seconds: 20, every: .milliseconds(100)) {
                    guard let first = try? get("index.m3u8"), first.status == 200 else { return false }
                    playlist = Playlist(String(decoding: first.body, as: UTF8.self))
                    return playlist.parts.count >= 1
                })
            var delays: [Int] = []
            var lastSequence = playlist.mediaSequence
            var initSections: [String: Data] = [:]
            for _ in 0..<10 {
                guard let newest = playlist.parts.last else { break }
                let next =
                    newest.uri.hasPrefix("p\(newest.msn).")
                    ? Int(newest.uri.split(separator: ".")[1]).map { $0 + 1 } : nil
                let reload = try get("index.m3u8", "&_HLS_msn=\(newest.msn)&_HLS_part=\(next ?? 0)")
                let arrived = ConferenceClient.nowMs()
                #expect(reload.status == 200)
                let text = String(decoding: reload.body, as: UTF8.self)
                playlist = Playlist(text)
                #expect(playlist.problems.isEmpty, "\(playlist.problems)\n\(text)")
                #expect(playlist.mediaSequence >= lastSequence, "the media sequence went back")
                lastSequence = playlist.mediaSequence
                #expect(text.contains("?token="), "URIs carry the token the player came with")
                // The newest part decodes after the parts of its segment before it (the first is independent).
                guard let last = playlist.parts.last else { continue }
                let map = text.split(separator: "\n").last { $0.hasPrefix("#EXT-X-MAP:URI=\"") }
                let initName = String(map?.dropFirst(16).prefix { $0 != "?" && $0 != "\"" } ?? "init0.mp4")
                if initSections[initName] == nil { initSections[initName] = try get(initName).body }
                var media = initSections[initName] ?? Data()
                for part in playlist.parts where part.msn == last.msn {
                    let name = String(part.uri.prefix { $0 != "?" })
                    let fetched = try get(name)
                    #expect(fetched.status == 200, "\(name): \(fetched.status)")
                    media += fetched.body
                }
                if let code = try Self.lastCode(media) { delays.append(BurnedTime.age(of: code, at: arrived)) }
            }
            print("LL-HLS: the newest part's last picture was \(delays) ms old when the blocking reload returned")
            #expect(delays.count >= 7, "pictures with a readable time: \(delays.count) of 10")
            #expect(delays.allSatisfy { $0 <= 2500 }, "\(delays)")

            // Plain HLS, public: no token; the first picture of each newest segment, when the segment is listed.
            var plainDelays: [Int] = []
            var plainProblems: [String] = []
            var seen: String?
            let plainPlayed = await eventually(seconds: 30, every: .milliseconds(50)) {
                guard let answer = try? cohost.call("GET", "/v1/rooms/plainhls/hls/index.m3u8", token: nil),
                    answer.status == 200
                else { return false }
                let arrived = ConferenceClient.nowMs()
                let list = Playlist(String(decoding: answer.body, as: UTF8.self))
                plainProblems += list.problems
                if !list.parts.isEmpty || list.partTarget != nil { plainProblems.append("parts in plain HLS") }
                guard let newest = list.segments.last, newest.uri != seen else { return false }
                let first = seen == nil
                seen = newest.uri
                // The first listing may show a segment that closed a while before.
                if first { return false }
                guard
                    let initSection = try? cohost.call("GET", "/v1/rooms/plainhls/hls/init0.mp4", token: nil).body,
                    let segment = try? cohost.call("GET", "/v1/rooms/plainhls/hls/\(newest.uri)", token: nil).body,
                    let code = try? Self.firstCode(initSection + segment)
                else { return false }
                plainDelays.append(BurnedTime.age(of: code, at: arrived))
                return plainDelays.count >= 2
            }
            #expect(plainPlayed && plainProblems.isEmpty, "\(plainProblems)")
            print("plain HLS: the newest segment's first picture was \(plainDelays) ms old when it was listed")
            #expect(plainDelays.allSatisfy { $0 <= 8000 }, "\(plainDelays)")
        }

        /// The burned-in time of the first picture of `media`.
        static func firstCode(_ media: Data) throws -> Int? {
            let path = NSTemporaryDirectory() + "cohost-hls-e2e-\(UUID().uuidString).mp4"
            defer { try? FileManager.default.removeItem(atPath: path) }
            try media.write(to: URL(fileURLWithPath: path))
            let result = try run(
                "ffmpeg",
                [
                    "-v", "error", "-nostdin", "-i", path, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "gray",
                    "-s", "640x360", "-",
                ], timeout: 20)
            return BurnedTime.read(luma: result.stdout)
        }

        @Test func aViewerTokenPlaysButCannotJoinAndOtherRoomsTokensCannotPlay() async throws {
            let cohost = try CohostHarness()
            let admin = cohost.token(room: "*", user: "producer", admin: true)
            try Self.makeRoom(cohost, room: "watched", admin: admin, hls: #""segmentSeconds":1,"partSeconds":0.25"#)
            let viewer = cohost.token(room: "watched", user: "watcher", viewer: true)
            let playlist = "/v1/rooms/watched/hls/index.m3u8"
            #expect(
                await eventually(seconds: 20, every: .milliseconds(100)) {
                    (try? cohost.call("GET", playlist, token: viewer).status) == 200
                })
            // In the header, the playlist's URIs carry no token.
            let text = String(decoding: try cohost.call("GET", playlist, token: viewer).body, as: UTF8.self)
            #expect(text.contains("#EXT-X-MAP:URI=\"init0.mp4\"\n"))
            #expect(try cohost.call("GET", playlist, token: nil).status == 401)
            let elsewhere = cohost.token(room: "other", user: "watcher", viewer: true)
            #expect(try cohost.call("GET", playlist, token: elsewhere).status == 403)
            #expect(try cohost.call("GET", "/v1/rooms/watched/hls/s999.m4s", token: viewer).status == 404)
            #expect(try cohost.call("GET", playlist + "?_HLS_msn=99999", token: viewer).status == 400)
            #expect(try cohost.call("GET", playlist + "?_HLS_part=1", token: viewer).status == 400)
            // A viewer never joins, administers or reads the events.
            let offer = CohostHarness.offer(audioSSRC: 5, videoSSRC: nil)
            let join = try cohost.call(
                "POST", "/v1/rooms/watched/participants", token: viewer, body: Data(offer.utf8),
                contentType: "application/sdp")
            #expect(join.status == 403)
            #expect(try cohost.call("GET", "/v1/rooms/watched", token: viewer).status == 403)
            // A second HLS output is refused; the first one, removed, takes its playlist with it.
            let second = try cohost.call(
                "POST", "/v1/rooms/watched/outputs", token: admin, body: Data(#"{"kind":"hls"}"#.utf8))
            #expect(second.status == 409)
            #expect(try cohost.call("DELETE", "/v1/rooms/watched/outputs/o1", token: admin).status == 204)
            #expect(try cohost.call("GET", playlist, token: viewer).status == 404)
        }
    }
}
