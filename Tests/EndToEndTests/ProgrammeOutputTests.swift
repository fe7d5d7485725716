import Foundation
import Testing
import TestSupport

extension EndToEnd {
    /// Outputs written by libavformat's muxers from the programme's own H.264 and AAC: an SRT caller to ffmpeg
    /// listening (killed and started again), and an MP4 recording cut by `kill -9`.
    @Suite struct ProgrammeOutputTests {
        static let background = "#2040c0"

        static func json(_ data: Data) -> [String: Any] {
            (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        }

        static func outputState(_ cohost: CohostHarness, room: String, admin: String) -> String? {
            let info = json((try? cohost.call("GET", "/v1/rooms/\(room)", token: admin).body) ?? Data())
            return (info["outputs"] as? [[String: Any]])?.first?["state"] as? String
        }

        static func size(_ path: String) -> Int {
            ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
        }

        /// Whether the centre of the first frame of `path` is the room's background (#2040c0).
        static func showsBackground(_ path: String) throws -> Bool {
            let rgb = try decodeFirstVideoFrameRGB(path: path, width: 64, height: 36)
            let i = (18 * 64 + 32) * 3
            return abs(Int(rgb[i]) - 0x20) <= 24 && abs(Int(rgb[i + 1]) - 0x40) <= 24
                && abs(Int(rgb[i + 2]) - 0xC0) <= 24
        }

        @Test func anSRTListenerGetsTheProgrammeAndItComesBackWithinThreeSecondsOfARestart() async throws {
            let port = try FreePort.udp()
            let dir = NSTemporaryDirectory() + "cohost-srt-out-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let passphrase = "pass-\(UUID().uuidString.prefix(8))"
            func listener(_ name: String) throws -> ManagedProcess {
                let process = ManagedProcess(
                    executable: "ffmpeg",
                    arguments: [
                        "-hide_banner", "-loglevel", "error", "-nostdin", "-y", "-i",
                        "srt://127.0.0.1:\(port)?mode=listener&passphrase=\(passphrase)", "-c", "copy",
                        "-flush_packets", "1",
                        "-f", "mpegts", "\(dir)/\(name).ts",
                    ])
                try process.start()
                return process
            }
            let first = try listener("first")
            let cohost = try CohostHarness()
            let room = "srtout"
            let admin = cohost.token(room: room, user: "producer", admin: true)
            let create = #"""
                {"name":"\#(room)","canvas":{"width":320,"height":180,"fps":15,"background":"\#(Self.background)"},
                 "outputs":[{"url":"srt://127.0.0.1:\#(port)?streamid=show&latency=200&passphrase=\#(passphrase)",
                             "backoff":{"initialMaxMs":300,"maxMs":600}}]}
                """#
            #expect(try cohost.call("POST", "/v1/rooms", token: admin, body: Data(create.utf8)).status == 201)
            #expect(await eventually(seconds: 15) { Self.outputState(cohost, room: room, admin: admin) == "connected" })
            #expect(await eventually(seconds: 15) { Self.size("\(dir)/first.ts") > 4_000 })

            // The listener dies; Cohost notices (its peer falls silent) and retries until it is back.
            kill(first.processIdentifier, SIGKILL)
            _ = first.waitForExit(timeout: 5)
            #expect(
                await eventually(seconds: 10) { Self.outputState(cohost, room: room, admin: admin) == "reconnecting" })
            let second = try listener("second")
            let restarted = Date()
            let back = await eventually(seconds: 10) {
                Self.outputState(cohost, room: room, admin: admin) == "connected"
            }
            let took = Date().timeIntervalSince(restarted)
            #expect(back && took <= 3.0, "connected again \(took) s after the listener came back")
            print("srt output: connected again \(String(format: "%.2f", took)) s after the listener came back")
            #expect(await eventually(seconds: 15) { Self.size("\(dir)/second.ts") > 4_000 })
            second.terminate()

            // The passphrase is in no log line, libavformat's and libsrt's included.
            #expect(!cohost.process.output.contains(passphrase))
            for name in ["first", "second"] {
                let path = "\(dir)/\(name).ts"
                let streams = try ffprobeStreams(url: path)
                #expect(Set(streams.map(\.codec)) == ["h264", "aac"], "\(name): \(streams)")
                #expect(try Self.showsBackground(path), "\(name) does not show the room's background")
            }
        }

        @Test func anMP4RecordingCutByKill9PlaysToWithinASecondOfTheCut() async throws {
            let name = "cohost-crash-\(UUID().uuidString).mp4"
            let path = NSTemporaryDirectory() + name
            defer { try? FileManager.default.removeItem(atPath: path) }
            let cohost = try CohostHarness()
            let room = "crash"
            let admin = cohost.token(room: room, user: "producer", admin: true)
            let create = #"""
                {"name":"\#(room)","canvas":{"width":320,"height":180,"fps":15,"background":"\#(Self.background)"},
                 "outputs":[{"url":"file://\#(name)"}]}
                """#
            #expect(try cohost.call("POST", "/v1/rooms", token: admin, body: Data(create.utf8)).status == 201)
            #expect(await eventually(seconds: 15) { Self.outputState(cohost, room: room, admin: admin) == "connected" })
            let connected = Date()
            // Three seconds of programme, then the process dies without a word.
            #expect(await eventually(seconds: 10) { Date().timeIntervalSince(connected) >= 3 && Self.size(path) > 0 })
            kill(cohost.process.processIdentifier, SIGKILL)
            let recordedFor = Date().timeIntervalSince(connected)
            _ = cohost.process.waitForExit(timeout: 5)

            let probe = try run(
                "ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", path], timeout: 15)
            let duration =
                Double(String(decoding: probe.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
                ?? 0
            #expect(recordedFor - duration <= 1.0, "\(duration) s in the file after \(recordedFor) s of recording")
            print("mp4 cut by kill -9: \(duration) s in the file after \(String(format: "%.2f", recordedFor)) s")
            // Every fragment decodes, to the room's background.
            let decode = try run("ffmpeg", ["-v", "error", "-nostdin", "-i", path, "-f", "null", "-"], timeout: 30)
            #expect(decode.status == 0 && decode.stderr.isEmpty, "\(decode.stderr)")
            #expect(Set(try ffprobeStreams(url: path).map(\.codec)) == ["h264", "aac"])
            #expect(try Self.showsBackground(path))
        }
    }
}
