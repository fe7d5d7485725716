import Foundation
import Testing
import TestSupport

extension EndToEnd {
    /// Pulled sources: files from the media directory, an RTSP camera (GStreamer's RTSP server) over TCP and UDP,
    /// an RTMP stream from nginx-rtmp, an SRT listener (ffmpeg) and HLS over HTTP, each a participant at its region
    /// of the programme and a tone in its mix.
    @Suite struct SourceTests {
        static let grey = (128, 128, 128)

        /// Writes `files` (name → ffmpeg input and codec arguments) into a fresh folder of the media directory (the
        /// temporary directory, `CohostHarness`); returns the folder's name.
        static func mediaFolder(_ files: [(String, [String])]) throws -> String {
            let folder = "cohost-media-\(UUID().uuidString)"
            let path = FileManager.default.temporaryDirectory.appendingPathComponent(folder).path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            for (name, arguments) in files {
                let result = try run(
                    "ffmpeg",
                    ["-hide_banner", "-loglevel", "error", "-nostdin", "-y"] + arguments + ["\(path)/\(name)"],
                    timeout: 60)
                guard result.status == 0 else { throw TestSupportError.failed("ffmpeg \(name): \(result.stderr)") }
            }
            return folder
        }

        static func json(_ data: Data) -> [String: Any] {
            (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        }

        static func sources(_ cohost: CohostHarness, room: String, admin: String) -> [String: [String: Any]] {
            guard let (status, body, _) = try? cohost.call("GET", "/v1/rooms/\(room)/sources", token: admin),
                status == 200, let list = json(body)["sources"] as? [[String: Any]]
            else { return [:] }
            return Dictionary(list.map { ($0["userId"] as? String ?? "", $0) }, uniquingKeysWith: { a, _ in a })
        }

        static func addSource(_ cohost: CohostHarness, room: String, admin: String, _ body: String) throws -> Int {
            try cohost.call("POST", "/v1/rooms/\(room)/sources", token: admin, body: Data(body.utf8)).status
        }

        /// The canvas now, as RGB24 (`GET …/snapshot`).
        static func snapshot(_ cohost: CohostHarness, room: String, admin: String) throws -> [UInt8] {
            let (status, png, _) = try cohost.call("GET", "/v1/rooms/\(room)/snapshot", token: admin)
            guard status == 200 else { throw TestSupportError.failed("snapshot: \(status)") }
            return try decodePNGWithFFmpeg([UInt8](png))
        }

        static func near(_ rgb: [UInt8], width: Int, x: Int, y: Int, _ c: (Int, Int, Int)) -> Bool {
            let i = (y * width + x) * 3
            guard i + 2 < rgb.count else { return false }
            return abs(Int(rgb[i]) - c.0) <= 40 && abs(Int(rgb[i + 1]) - c.1) <= 40 && abs(Int(rgb[i + 2]) - c.2) <= 40
        }

        /// Goertzel power of `hz` in `samples` relative to the window's mean power (0.5: a pure tone; 0: absent).
        static func share(_ samples: ArraySlice<Int16>, _ hz: Double) -> Double {
            let window = [Float](samples.map { Float($0) / 32768 })
            let mean = window.reduce(0) { $0 + Double($1 * $1) } / Double(max(1, window.count))
            guard mean > 1e-7 else { return 0 }
            return Goertzel.power(samples: window, sampleRate: 48000, frequency: hz) / mean
        }

        @Test func filesPlayInRealTimeALoopWithoutAGapAndAJingleOnceIntoTheMixOnly() async throws {
            let folder = try Self.mediaFolder([
                (
                    "cam.mp4",
                    [
                        "-f", "lavfi", "-i", "color=c=red:s=320x180:r=30:d=2", "-f", "lavfi", "-i",
                        "sine=f=440:d=2:sample_rate=44100", "-c:v", "libx264", "-g", "30", "-pix_fmt", "yuv420p",
                        "-c:a", "aac", "-shortest",
                    ]
                ),
                ("music.wav", ["-f", "lavfi", "-i", "sine=f=1000:d=1:sample_rate=16000"]),
                ("jingle.mp3", ["-f", "lavfi", "-i", "sine=f=2500:d=1:sample_rate=44100", "-c:a", "libmp3lame"]),
            ])
            defer { try? FileManager.default.removeItem(atPath: NSTemporaryDirectory() + folder) }
            let cohost = try CohostHarness()
            let room = "files1"
            let admin = cohost.token(room: room, user: "producer", admin: true)
            let file = NSTemporaryDirectory() + "cohost-sources-\(UUID().uuidString).flv"
            defer { try? FileManager.default.removeItem(atPath: file) }
            let create = #"""
                {"name":"\#(room)","canvas":{"width":640,"height":360,"fps":30,"background":"#808080",
                 "placeholder":"#303030"},"layout":{"mode":"grid"},"outputs":[{"url":"file://\#(file)"}]}
                """#
            #expect(try cohost.call("POST", "/v1/rooms", token: admin, body: Data(create.utf8)).status == 201)
            let recorder = EventRecorder(
                url: "ws://127.0.0.1:\(cohost.httpPort)/v1/rooms/\(room)/events?token=\(admin)")
            recorder.start()
            defer { recorder.stop() }
            try await recorder.waitUntilConnected()
            for body in [
                #"{"userId":"cam","url":"file://\#(folder)/cam.mp4","loop":true}"#,
                #"{"userId":"music","url":"file://\#(folder)/music.wav","loop":true,"gain":0.5}"#,
                #"{"userId":"jingle","url":"file://\#(folder)/jingle.mp3"}"#,
            ] {
                #expect(try Self.addSource(cohost, room: room, admin: admin, body) == 201)
            }
            // The jingle plays once and ends; the others loop (the camera's file is 2 s, the music's 1 s).
            #expect(
                await eventually(seconds: 15) {
                    Self.sources(cohost, room: room, admin: admin)["jingle"]?["state"] as? String == "ended"
                })
            #expect(
                await eventually(seconds: 15) {
                    (Self.sources(cohost, room: room, admin: admin)["cam"]?["picturesShown"] as? Int ?? 0) >= 150
                })
            let listed = Self.sources(cohost, room: room, admin: admin)
            #expect(listed["music"]?["video"] as? Bool == false && listed["music"]?["audio"] as? Bool == true)
            #expect(listed["cam"]?["video"] as? Bool == true && listed["cam"]?["state"] as? String == "live")
            #expect(listed["music"]?["gain"] as? Double == 0.5)
            let events = OutputEventLog(recorder: recorder).events
            let jingleStates = events.filter {
                $0["type"] as? String == "source_state" && $0["userId"] as? String == "jingle"
            }
            .compactMap { $0["state"] as? String }
            #expect(jingleStates == ["connecting", "live", "ended"])
            #expect(
                events.contains {
                    $0["type"] as? String == "participant_left" && $0["userId"] as? String == "jingle"
                        && $0["reason"] as? String == "ended"
                })
            #expect(try cohost.call("DELETE", "/v1/rooms/\(room)", token: admin).status == 204)

            // Only the camera is placed (the grid fills the canvas with it): the music and the jingle have no picture.
            let frame = try decodeFirstVideoFrameRGB(path: file, width: 64, height: 36, seekSeconds: 4)
            for (x, y) in [(4, 4), (32, 18), (60, 32)] {
                #expect(
                    Self.near(frame, width: 64, x: x, y: y, (255, 0, 0)), "pixel (\(x),\(y)) is not the camera's red")
            }
            let audio = try decodeAudioS16Mono(url: file, seconds: 30)
            let seconds = audio.count / 48000
            #expect(seconds >= 5)
            // The camera's tone and the music are there in every 100 ms window from 1.5 s on (across both loops'
            // seams), the jingle only in the first seconds.
            var quietWindows: [Double] = []
            for start in stride(from: 72_000, to: audio.count - 4800 - 24_000, by: 4800) {
                let window = audio[start..<start + 4800]
                if Self.share(window, 1000) < 0.05 || Self.share(window, 440) < 0.05 {
                    quietWindows.append(Double(start) / 48000)
                }
            }
            #expect(quietWindows.isEmpty, "windows without a looping voice at \(quietWindows)")
            let ending = audio[(audio.count - 48000)...]
            #expect(Self.share(ending, 2500) < 0.01, "the jingle still plays at the end")
            let jingleHeard = stride(from: 0, to: min(audio.count, 48000 * 4) - 4800, by: 4800).contains {
                Self.share(audio[$0..<$0 + 4800], 2500) > 0.1
            }
            #expect(jingleHeard, "the jingle was never heard")
        }

        @Test func anRTSPCameraOverTCPAndUDPIsPlacedComesBackWithinThreeSecondsAndItsPasswordIsNowhere() async throws {
            let password = "pw-\(UUID().uuidString.prefix(8))"
            let green = try RTSPCamera(colour: "0xff00ff00", toneHz: 600, credentials: ("viewer", password))
            let blue = try RTSPCamera(colour: "0xff0000ff", toneHz: 900)
            let cohost = try CohostHarness()
            let room = "rtsp1"
            let admin = cohost.token(room: room, user: "producer", admin: true)
            let file = NSTemporaryDirectory() + "cohost-rtsp-\(UUID().uuidString).flv"
            defer { try? FileManager.default.removeItem(atPath: file) }
            // Both cameras are 4:3: regions of 4:3 show them whole.
            let create = #"""
                {"name":"\#(room)","canvas":{"width":640,"height":360,"fps":30,"background":"#808080",
                 "placeholder":"#303030","holdMs":500},
                 "layout":{"mode":"custom","regions":[{"userId":"door","x":0,"y":0,"width":320,"height":240},
                   {"userId":"yard","x":320,"y":0,"width":320,"height":240}]},
                 "outputs":[{"url":"file://\#(file)"}]}
                """#
            #expect(try cohost.call("POST", "/v1/rooms", token: admin, body: Data(create.utf8)).status == 201)
            let recorder = EventRecorder(
                url: "ws://127.0.0.1:\(cohost.httpPort)/v1/rooms/\(room)/events?token=\(admin)")
            recorder.start()
            defer { recorder.stop() }
            try await recorder.waitUntilConnected()
            #expect(
                try Self.addSource(
                    cohost, room: room, admin: admin, #"{"userId":"door","url":"\#(green.url)","transport":"tcp"}"#)
                    == 201)
            #expect(
                try Self.addSource(
                    cohost, room: room, admin: admin, #"{"userId":"yard","url":"\#(blue.url)","transport":"udp"}"#)
                    == 201)
            let bothLive = await eventually(seconds: 15) {
                let s = Self.sources(cohost, room: room, admin: admin)
                return s["door"]?["state"] as? String == "live" && s["yard"]?["state"] as? String == "live"
            }
            #expect(bothLive)
            // Sampled near each region's top-left corner: a camera's card has its name in the middle.
            func shows(_ expected: (door: (Int, Int, Int), yard: (Int, Int, Int))) -> Bool {
                guard let rgb = try? Self.snapshot(cohost, room: room, admin: admin) else { return false }
                return Self.near(rgb, width: 640, x: 40, y: 40, expected.door)
                    && Self.near(rgb, width: 640, x: 360, y: 40, expected.yard)
                    && Self.near(rgb, width: 640, x: 320, y: 320, Self.grey)
            }
            #expect(
                await eventually(seconds: 10) { shows(((0, 255, 0), (0, 0, 255))) }, "both cameras at their regions")

            // The camera goes away: the placeholder after the hold time, and retries; it comes back: live in ≤ 3 s.
            green.stop()
            #expect(await eventually(seconds: 10) { shows(((48, 48, 48), (0, 0, 255))) }, "the placeholder")
            #expect(
                await eventually(seconds: 10) {
                    Self.sources(cohost, room: room, admin: admin)["door"]?["state"] as? String == "retrying"
                })
            let back = Date()
            try green.start()
            let liveAgain = await eventually(seconds: 10, every: .milliseconds(20)) {
                OutputEventLog(recorder: recorder).events.contains {
                    $0["type"] as? String == "source_state" && $0["userId"] as? String == "door"
                        && $0["state"] as? String == "live" && (OutputEventLog.time($0) ?? .distantPast) > back
                }
            }
            let waited = Date().timeIntervalSince(back)
            #expect(liveAgain && waited <= 3.5, "live again \(waited) s after the camera came back")
            #expect(await eventually(seconds: 10) { shows(((0, 255, 0), (0, 0, 255))) }, "the camera is back")

            // Both tones are in the mix, each camera's sound: heard (levels) for a second and a half before the end.
            func bothHeard() -> Bool {
                guard let (status, body, _) = try? cohost.call("GET", "/v1/rooms/\(room)", token: admin), status == 200
                else { return false }
                let levels = (Self.json(body)["participants"] as? [[String: Any]] ?? []).map {
                    $0["level"] as? Int ?? 0
                }
                return levels.count == 2 && levels.allSatisfy { $0 > 30 }
            }
            #expect(await eventually(seconds: 10) { bothHeard() })
            let heard = Date()
            _ = await eventually(seconds: 2) { Date().timeIntervalSince(heard) >= 1.5 }
            let levels = try cohost.call("GET", "/v1/rooms/\(room)", token: admin)
            let metrics = try cohost.call("GET", "/metrics", token: nil)
            let sources = try cohost.call("GET", "/v1/rooms/\(room)/sources", token: admin)
            #expect(try cohost.call("DELETE", "/v1/rooms/\(room)", token: admin).status == 204)
            let audio = try decodeAudioS16Mono(url: file, seconds: 60)
            // The second before the last half second (the programme's end is cut where the room closed).
            let last = audio[max(0, audio.count - 72000)..<max(0, audio.count - 24000)]
            let shares = (Self.share(last, 600), Self.share(last, 900))
            #expect(shares.0 > 0.05 && shares.1 > 0.05, "both cameras' tones in the mix: \(shares)")
            // The password is in no log line, event, API answer or metric.
            let everything = [
                cohost.process.output, recorder.messages.joined(separator: "\n"),
                String(decoding: levels.body, as: UTF8.self), String(decoding: sources.body, as: UTF8.self),
                String(decoding: metrics.body, as: UTF8.self),
            ]
            for (i, text) in everything.enumerated() { #expect(!text.contains(password), "the password leaked (\(i))") }
            #expect(String(decoding: sources.body, as: UTF8.self).contains("rtsp://***@127.0.0.1"))
        }

        @Test func rtmpSRTAndHLSStreamsArePulledIntoTheirRegions() async throws {
            let nginx = try NginxRTMP()
            defer { nginx.stop() }
            func sender(_ colour: String, _ hz: Int, _ output: [String]) -> ManagedProcess {
                ManagedProcess(
                    executable: "ffmpeg",
                    arguments: [
                        "-hide_banner", "-loglevel", "error", "-nostdin", "-re", "-f", "lavfi", "-i",
                        "color=c=\(colour):s=320x240:r=25", "-f", "lavfi", "-i", "sine=f=\(hz):sample_rate=48000",
                        "-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency", "-g", "25",
                        "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "64k",
                    ] + output)
            }
            let rtmp = sender("yellow", 500, ["-f", "flv", nginx.url(stream: "feed")])
            try rtmp.start()
            defer { rtmp.terminate() }
            let srtPort = try FreePort.udp()
            let srt = sender(
                "magenta", 700, ["-f", "mpegts", "srt://127.0.0.1:\(srtPort)?mode=listener&latency=100000"])
            try srt.start()
            defer { srt.terminate() }
            let hlsDir = NSTemporaryDirectory() + "cohost-hls-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: hlsDir, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: hlsDir) }
            let hls = sender(
                "cyan", 800, ["-f", "hls", "-hls_time", "1", "-hls_list_size", "6", "\(hlsDir)/index.m3u8"])
            try hls.start()
            defer { hls.terminate() }
            let httpPort = try FreePort.tcp()
            let web = ManagedProcess(
                executable: "/usr/bin/python3",
                arguments: ["-m", "http.server", "\(httpPort)", "--bind", "127.0.0.1", "--directory", hlsDir])
            try web.start()
            defer { web.terminate() }
            #expect(await eventually(seconds: 15) { FileManager.default.fileExists(atPath: "\(hlsDir)/index.m3u8") })

            let cohost = try CohostHarness()
            let room = "pull1"
            let admin = cohost.token(room: room, user: "producer", admin: true)
            let file = NSTemporaryDirectory() + "cohost-pull-\(UUID().uuidString).flv"
            defer { try? FileManager.default.removeItem(atPath: file) }
            let create = #"""
                {"name":"\#(room)","canvas":{"width":960,"height":240,"fps":25,"background":"#808080",
                 "placeholder":"#303030"},
                 "layout":{"mode":"custom","regions":[{"userId":"obs","x":0,"y":0,"width":320,"height":240},
                   {"userId":"truck","x":320,"y":0,"width":320,"height":240},
                   {"userId":"show","x":640,"y":0,"width":320,"height":240}]},
                 "outputs":[{"url":"file://\#(file)"}]}
                """#
            #expect(try cohost.call("POST", "/v1/rooms", token: admin, body: Data(create.utf8)).status == 201)
            for body in [
                #"{"userId":"obs","url":"\#(nginx.url(stream: "feed"))"}"#,
                #"{"userId":"truck","url":"srt://127.0.0.1:\#(srtPort)?latency=100000"}"#,
                #"{"userId":"show","url":"http://127.0.0.1:\#(httpPort)/index.m3u8"}"#,
            ] {
                #expect(try Self.addSource(cohost, room: room, admin: admin, body) == 201)
            }
            let allLive = await eventually(seconds: 20) {
                Self.sources(cohost, room: room, admin: admin).values.filter { $0["state"] as? String == "live" }.count
                    == 3
            }
            #expect(allLive, "\(Self.sources(cohost, room: room, admin: admin))")
            let colours = await eventually(seconds: 15) {
                guard let rgb = try? Self.snapshot(cohost, room: room, admin: admin) else { return false }
                return Self.near(rgb, width: 960, x: 160, y: 120, (255, 255, 0))
                    && Self.near(rgb, width: 960, x: 480, y: 120, (255, 0, 255))
                    && Self.near(rgb, width: 960, x: 800, y: 120, (0, 255, 255))
            }
            #expect(colours, "each stream at its region")
            // Two seconds of the mix with all three playing.
            let mixed = Date()
            _ = await eventually(seconds: 2.5) { Date().timeIntervalSince(mixed) >= 2 }
            #expect(try cohost.call("DELETE", "/v1/rooms/\(room)", token: admin).status == 204)
            let audio = try decodeAudioS16Mono(url: file, seconds: 120)
            let last = audio[max(0, audio.count - 72000)..<max(0, audio.count - 24000)]
            for hz in [500.0, 700, 800] { #expect(Self.share(last, hz) > 0.03, "the \(hz) Hz stream in the mix") }
        }

        @Test(arguments: ["srt", "rtmp"])
        func anEncoderPushesWithItsKeyAWrongKeyIsRefusedAndDeletingDisconnectsIt(over listen: String) async throws {
            let srtPort = try FreePort.udp()
            let rtmpPort = try FreePort.tcp()
            let cohost = try CohostHarness(
                arguments: CohostHarness.standardArguments + ["--srt-port", "\(srtPort)", "--rtmp-port", "\(rtmpPort)"])
            let room = "push1"
            let admin = cohost.token(room: room, user: "producer", admin: true)
            let create = #"""
                {"name":"\#(room)","canvas":{"width":640,"height":360,"fps":25,"background":"#808080",
                 "placeholder":"#303030"},"layout":{"mode":"grid"}}
                """#
            #expect(try cohost.call("POST", "/v1/rooms", token: admin, body: Data(create.utf8)).status == 201)
            let recorder = EventRecorder(
                url: "ws://127.0.0.1:\(cohost.httpPort)/v1/rooms/\(room)/events?token=\(admin)")
            recorder.start()
            defer { recorder.stop() }
            try await recorder.waitUntilConnected()
            let added = try cohost.call(
                "POST", "/v1/rooms/\(room)/sources", token: admin,
                body: Data(#"{"userId":"obs","listen":"\#(listen)"}"#.utf8))
            #expect(added.status == 201)
            let url = try #require(Self.json(added.body)["url"] as? String)
            let key = try #require(url.split(separator: "/").last.map(String.init))
            let base = listen == "srt" ? "srt://127.0.0.1:\(srtPort)?streamid=" : "rtmp://127.0.0.1:\(rtmpPort)/"
            #expect(url == "\(base)\(room)/\(key)" && key.count == 32)
            let format = listen == "srt" ? "mpegts" : "flv"
            func push(_ target: String, colour: String) -> ManagedProcess {
                ManagedProcess(
                    executable: "ffmpeg",
                    arguments: [
                        "-hide_banner", "-loglevel", "error", "-nostdin", "-re", "-f", "lavfi", "-i",
                        "color=c=\(colour):s=320x240:r=25", "-f", "lavfi", "-i", "sine=f=500:sample_rate=48000",
                        "-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency", "-g", "50",
                        "-pix_fmt", "yuv420p", "-c:a", "aac", "-f", format, target,
                    ])
            }
            // OBS's and ffmpeg's defaults: H.264 + AAC (in MPEG-TS over SRT, in FLV over RTMP), a keyframe every 2 s.
            let encoder = push(url, colour: "yellow")
            try encoder.start()
            defer { encoder.terminate() }
            #expect(
                await eventually(seconds: 15) {
                    Self.sources(cohost, room: room, admin: admin)["obs"]?["state"] as? String == "live"
                })
            let shown = await eventually(seconds: 10) {
                guard let rgb = try? Self.snapshot(cohost, room: room, admin: admin) else { return false }
                return Self.near(rgb, width: 640, x: 320, y: 180, (255, 255, 0))
            }
            #expect(shown, "the pushed picture on the canvas")

            // A wrong key is refused in the handshake and counted; no source reads from it.
            let intruder = push("\(base)\(room)/0123456789abcdef0123456789abcdef", colour: "red")
            try intruder.start()
            defer { intruder.terminate() }
            #expect(intruder.waitForExit(timeout: 15).map { $0 != 0 } == true, "the wrong key was let in")
            let metrics = String(decoding: try cohost.call("GET", "/metrics", token: nil).body, as: UTF8.self)
            #expect(metrics.contains("cohost_pushes_refused{protocol=\"\(listen)\"} 1"), "\(metrics)")

            // Deleting the source revokes the key and disconnects the encoder.
            #expect(try cohost.call("DELETE", "/v1/rooms/\(room)/sources/obs", token: admin).status == 204)
            #expect(encoder.waitForExit(timeout: 15) != nil, "the encoder is still connected")
            let again = push(url, colour: "yellow")
            try again.start()
            defer { again.terminate() }
            #expect(again.waitForExit(timeout: 15).map { $0 != 0 } == true, "a revoked key was let in")
            // The key is in no event (their URL hides it).
            let events = recorder.messages.joined(separator: "\n")
            #expect(events.contains("\(room)/***") && !events.contains(key))
        }

        @Test func refusalsAreClearAndARemovedSourceLeaves() async throws {
            let folder = try Self.mediaFolder([
                ("tone.wav", ["-f", "lavfi", "-i", "sine=f=1000:d=1:sample_rate=16000"])
            ])
            let folderPath = NSTemporaryDirectory() + folder
            defer { try? FileManager.default.removeItem(atPath: folderPath) }
            try Data("not media at all".utf8).write(to: URL(fileURLWithPath: folderPath + "/broken.mp4"))
            let cohost = try CohostHarness(
                arguments: CohostHarness.standardArguments + ["--max-sources-per-room", "2"])
            let room = "refuse1"
            let admin = cohost.token(room: room, user: "producer", admin: true)
            let guest = cohost.token(room: room, user: "guest")
            #expect(
                try cohost.call("POST", "/v1/rooms", token: admin, body: Data(#"{"name":"refuse1"}"#.utf8)).status
                    == 201)
            func post(_ body: String, token: String? = nil) throws -> (Int, String) {
                let r = try cohost.call(
                    "POST", "/v1/rooms/\(room)/sources", token: token ?? admin, body: Data(body.utf8))
                return (
                    r.status, Self.json(r.body)["error"].flatMap { ($0 as? [String: Any])?["code"] as? String } ?? ""
                )
            }
            #expect(try post(#"{"userId":"obs","listen":"rtmp"}"#) == (501, "not_implemented"))
            #expect(try post(#"{"userId":"obs","listen":"srt"}"#) == (501, "not_implemented"))
            #expect(try post(#"{"userId":"obs","listen":"hls"}"#) == (400, "invalid_source"))
            #expect(try post(#"{"userId":"x","url":"ftp://127.0.0.1/a.mp4"}"#) == (400, "invalid_source"))
            #expect(
                try post(#"{"userId":"x","url":"rtmp://127.0.0.1/a/b","transport":"udp"}"#) == (400, "invalid_source"))
            #expect(try post(#"{"userId":"x","url":"file://\#(folder)/tone.wav","gain":9}"#) == (400, "invalid_source"))
            #expect(try post(#"{"userId":"bad id!","url":"file://\#(folder)/tone.wav"}"#) == (400, "invalid_user"))
            #expect(try post(#"{"userId":"x","url":"file://../etc/passwd"}"#) == (403, "forbidden_path"))
            #expect(try post(#"{"userId":"x","url":"file:///etc/passwd"}"#) == (403, "forbidden_path"))
            #expect(try post(#"{"userId":"x","url":"file://\#(folder)/missing.wav"}"#) == (404, "not_found"))
            #expect(try post(#"{"userId":"x","url":"file://\#(folder)/tone.wav"}"#, token: guest).0 == 403)
            #expect(try post(#"{"userId":"x","url":"file://\#(folder)/tone.wav"}"#, token: guest).0 == 403)

            // A file that is no media fails with libavformat's reason and never joins.
            #expect(try post(#"{"userId":"junk","url":"file://\#(folder)/broken.mp4"}"#).0 == 201)
            #expect(
                await eventually(seconds: 10) {
                    Self.sources(cohost, room: room, admin: admin)["junk"]?["state"] as? String == "failed"
                })
            let reason = Self.sources(cohost, room: room, admin: admin)["junk"]?["error"] as? String ?? ""
            #expect(reason.contains("cannot"), "\(reason)")
            #expect(try cohost.call("DELETE", "/v1/rooms/\(room)/sources/junk", token: admin).status == 204)

            #expect(try post(#"{"userId":"loop1","url":"file://\#(folder)/tone.wav","loop":true}"#).0 == 201)
            #expect(
                try post(#"{"userId":"loop1","url":"file://\#(folder)/tone.wav","loop":true}"#) == (
                    409, "source_exists"
                ))
            #expect(try post(#"{"userId":"loop2","url":"file://\#(folder)/tone.wav","loop":true}"#).0 == 201)
            #expect(
                try post(#"{"userId":"loop3","url":"file://\#(folder)/tone.wav","loop":true}"#) == (
                    429, "too_many_sources"
                ))
            func present() -> [String] {
                guard let (status, body, _) = try? cohost.call("GET", "/v1/rooms/\(room)", token: admin), status == 200
                else { return [] }
                return (Self.json(body)["participants"] as? [[String: Any]] ?? []).compactMap {
                    $0["userId"] as? String
                }
            }
            #expect(await eventually(seconds: 10) { Set(present()) == ["loop1", "loop2"] })
            // A running source's user id is taken: a participant cannot join with it.
            let joining = try cohost.call(
                "POST", "/v1/rooms/\(room)/participants", token: cohost.token(room: room, user: "loop1"),
                body: Data(CohostHarness.offer(audioSSRC: 4321, videoSSRC: nil).utf8), contentType: "application/sdp")
            #expect(joining.status == 409 && String(decoding: joining.body, as: UTF8.self).contains("user_exists"))
            #expect(try cohost.call("DELETE", "/v1/rooms/\(room)/sources/loop1", token: admin).status == 204)
            #expect(try cohost.call("DELETE", "/v1/rooms/\(room)/sources/loop1", token: admin).status == 404)
            #expect(await eventually(seconds: 5) { present() == ["loop2"] })
            #expect(Set(Self.sources(cohost, room: room, admin: admin).keys) == ["loop2"])
            // Kicked as a participant, a source stops being pulled.
            #expect(try cohost.call("DELETE", "/v1/rooms/\(room)/participants/loop2", token: admin).status == 204)
            #expect(await eventually(seconds: 5) { present().isEmpty })
            #expect(Self.sources(cohost, room: room, admin: admin).isEmpty)
        }
    }
}
