import Foundation
import Testing
import TestSupport

extension EndToEnd {
    /// The API subcommands of `cohost` (room, participant, output, events, invite) against a real `cohost serve`:
    /// exit statuses, the tables a person reads, and `--json` checked against protocol/openapi.yaml and
    /// protocol/events.schema.json by scripts/validate-against-schemas.py.
    @Suite struct CommandLineTests {
        /// Participants join with an offer and send nothing: they stay for a minute instead of 10 s.
        static func server() throws -> CohostHarness {
            try CohostHarness(arguments: CohostHarness.standardArguments + ["--participant-timeout", "60"])
        }

        /// What a script would set: the server, the key's secret, and a login name (the minted token's user).
        static func environment(_ server: CohostHarness) -> [String: String] {
            ["COHOST_URL": server.url(""), "COHOST_SECRET": CohostHarness.secret, "USER": "producer"]
        }

        /// `cohost ARGUMENTS --key testkey` against `server`.
        static func cohost(
            _ server: CohostHarness, _ arguments: [String], input: Data? = nil
        ) throws -> CohostCommand.Result {
            try CohostCommand.run(
                arguments + ["--key", CohostHarness.key], environment: environment(server), input: input)
        }

        /// A `--json` output as the API answer it is, for the validator.
        static func answer(_ method: String, _ path: String, _ status: Int, _ body: String) -> String {
            let record: [String: Any] = [
                "kind": "http", "method": method, "path": path, "status": status, "contentType": "application/json",
                "body": body,
            ]
            return String(decoding: try! JSONSerialization.data(withJSONObject: record), as: UTF8.self)
        }

        static func event(_ body: String) -> String {
            String(
                decoding: try! JSONSerialization.data(withJSONObject: ["kind": "event", "body": body]), as: UTF8.self)
        }

        static func expectValid(_ records: [String]) throws {
            let outcome = try SchemaValidator.run(jsonLines: records)
            #expect(outcome.status == 0, "\(outcome.stderr)")
            #expect(outcome.stdout.hasPrefix("schemas ok"), "\(outcome.stdout)")
        }

        /// `room show --json` with `key` replaced by a list command's `--json`: a Room the validator can check.
        static func room(_ roomJSON: String, with key: String, _ listJSON: String) throws -> String {
            var room = try #require(try JSONSerialization.jsonObject(with: Data(roomJSON.utf8)) as? [String: Any])
            room[key] = try JSONSerialization.jsonObject(with: Data(listJSON.utf8))
            return String(decoding: try JSONSerialization.data(withJSONObject: room), as: UTF8.self)
        }

        @Test func roomCommandsCreateListShowLayOutSnapshotAndClose() throws {
            let s = try Self.server()
            let created = try Self.cohost(
                s, ["room", "create", "cli", "--canvas", "320x180", "--fps", "5", "--preset", "low1"])
            #expect(created.status == 0, "\(created.stderr)")
            #expect(
                created.rows == [
                    ["name", "cli"], ["canvas", "320x180@5, background #000000"],
                    ["video", "128 kbit/s, baseline profile, keyframe every 2 s"], ["audio", "128 kbit/s, stereo"],
                    ["layout", "grid"], ["participants", "0 of 16"], ["outputs", "0"],
                ], "\(created.stdout)")
            let audio = try Self.cohost(s, ["room", "create", "cli-audio", "--audio-only", "--json"])
            #expect(audio.status == 0 && (audio.json as? [String: Any])?["audioOnly"] as? Bool == true)
            let exists = try Self.cohost(s, ["room", "create", "cli"])
            #expect(exists.status == 1 && exists.stderr == "error: room_exists: room 'cli' already exists\n")

            let list = try Self.cohost(s, ["room", "list"])
            #expect(
                list.rows == [
                    ["NAME", "PARTICIPANTS", "OUTPUTS", "CANVAS", "LAYOUT"], ["cli", "0", "0", "320x180@5", "grid"],
                    ["cli-audio", "0", "0", "audio only", "grid"],
                ], "\(list.stdout)")
            let listJSON = try Self.cohost(s, ["room", "list", "--json"])
            let show = try Self.cohost(s, ["room", "show", "cli", "--json"])
            #expect((show.json as? [String: Any])?["name"] as? String == "cli")

            let custom = try Self.cohost(
                s,
                [
                    "room", "layout", "cli", "--mode", "custom", "--region", "anchor@0,0,320x180", "--region",
                    "guest@200,100,100x60",
                ])
            #expect(
                custom.rows == [
                    ["mode", "custom"], ["USER", "X", "Y", "WIDTH", "HEIGHT", "Z", "FIT", "ALPHA"],
                    ["anchor", "0", "0", "320", "180", "0", "cover", "1"],
                    ["guest", "200", "100", "100", "60", "0", "cover", "1"],
                ], "\(custom.stdout)")
            let pip = try Self.cohost(s, ["room", "layout", "cli", "--mode", "pip", "--anchor", "guest", "--json"])
            #expect(
                (pip.json as? [String: Any])?["mode"] as? String == "pip"
                    && (pip.json as? [String: Any])?["anchor"] as? String == "guest")
            let fromStdin = try Self.cohost(
                s, ["room", "layout", "cli", "--body", "-"], input: Data(#"{"mode":"grid","anchor":"guest"}"#.utf8))
            #expect(
                fromStdin.status == 0 && fromStdin.rows == [["mode", "grid"], ["anchor", "guest"]],
                "\(fromStdin.stdout)")
            let outside = try Self.cohost(
                s, ["room", "layout", "cli", "--mode", "custom", "--region", "a@500,0,10x10"])
            #expect(outside.status == 1 && outside.stderr.hasPrefix("error: invalid_layout: "), "\(outside.stderr)")

            let png = FileManager.default.temporaryDirectory.appendingPathComponent(
                "cohost-cli-\(UUID().uuidString).png")
            defer { try? FileManager.default.removeItem(at: png) }
            let snapshot = try Self.cohost(s, ["room", "snapshot", "cli", "-o", png.path])
            let bytes = [UInt8](try Data(contentsOf: png))
            #expect(snapshot.status == 0 && snapshot.stdout == "wrote \(png.path): 320x180 PNG, \(bytes.count) bytes\n")
            #expect(bytes.prefix(8) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
            #expect(Array(bytes[16..<24]) == [0, 0, 1, 64, 0, 0, 0, 180])  // IHDR: 320 × 180
            let noCanvas = try Self.cohost(s, ["room", "snapshot", "cli-audio", "-o", png.path])
            #expect(noCanvas.status == 1 && noCanvas.stderr.hasPrefix("error: audio_only: "), "\(noCanvas.stderr)")

            try Self.expectValid([
                Self.answer("POST", "/v1/rooms", 201, audio.stdout),
                Self.answer("GET", "/v1/rooms", 200, listJSON.stdout),
                Self.answer("GET", "/v1/rooms/cli", 200, show.stdout),
                Self.answer("PUT", "/v1/rooms/cli/layout", 200, pip.stdout),
            ])

            let closed = try Self.cohost(s, ["room", "close", "cli"])
            #expect(closed.status == 0 && closed.stdout == "closed room cli\n")
            let gone = try Self.cohost(s, ["room", "show", "cli"])
            #expect(gone.status == 1 && gone.stdout.isEmpty && gone.stderr == "error: not_found: no room 'cli'\n")
        }

        @Test func roomCreateTakesItsBodyFromAFileOrStandardInput() throws {
            let s = try Self.server()
            let file = FileManager.default.temporaryDirectory.appendingPathComponent(
                "cohost-cli-\(UUID().uuidString).json")
            defer { try? FileManager.default.removeItem(at: file) }
            try Data(
                ##"{"name":"template","maxParticipants":4,"canvas":{"width":320,"height":180,"fps":5,"background":"#202040"}}"##
                    .utf8
            ).write(to: file)
            // The name given replaces the template's.
            let fromFile = try Self.cohost(s, ["room", "create", "from-file", "--body", file.path, "--json"])
            let room = fromFile.json as? [String: Any]
            #expect(
                fromFile.status == 0 && room?["name"] as? String == "from-file" && room?["maxParticipants"] as? Int == 4
            )
            #expect((room?["canvas"] as? [String: Any])?["background"] as? String == "#202040")

            let fromStdin = try Self.cohost(
                s, ["room", "create", "--body", "-", "--json"],
                input: Data(#"{"name":"from-stdin","audioOnly":true}"#.utf8))
            #expect(fromStdin.status == 0 && (fromStdin.json as? [String: Any])?["audioOnly"] as? Bool == true)
            try Self.expectValid([
                Self.answer("POST", "/v1/rooms", 201, fromFile.stdout),
                Self.answer("POST", "/v1/rooms", 201, fromStdin.stdout),
            ])

            // A body alone is sent as it is, for the server to judge; flags need an object to lay themselves over.
            let broken = try Self.cohost(s, ["room", "create", "--body", "-"], input: Data(#"{"name":"#.utf8))
            #expect(broken.status == 1 && broken.stderr.hasPrefix("error: invalid_json: "), "\(broken.stderr)")
            let array = try Self.cohost(s, ["room", "create", "x", "--body", "-"], input: Data("[1]".utf8))
            #expect(
                array.status == 2 && array.stderr.contains("--body -: the body is not a JSON object"), "\(array.stderr)"
            )
        }

        @Test func outputCommandsAddListAndRemove() throws {
            let s = try Self.server()
            #expect(
                try Self.cohost(s, ["room", "create", "out", "--canvas", "160x96", "--fps", "5", "--preset", "low1"])
                    .status == 0)
            let first = FileManager.default.temporaryDirectory.appendingPathComponent(
                "cohost-cli-\(UUID().uuidString).flv")
            let second = FileManager.default.temporaryDirectory.appendingPathComponent(
                "cohost-cli-\(UUID().uuidString).flv")
            defer {
                try? FileManager.default.removeItem(at: first)
                try? FileManager.default.removeItem(at: second)
            }
            let added = try Self.cohost(s, ["output", "add", "out", "file://\(first.path)"])
            #expect(
                added.status == 0 && added.rows.first == ["ID", "STATE", "ATTEMPT", "KBPS", "SENT", "URL", "ERROR"])
            let row = added.rows.dropFirst().first ?? []
            #expect(
                row.count == 7 && row[0] == "o1" && ["connecting", "connected"].contains(row[1]), "\(added.stdout)")
            #expect(row.count == 7 && row[5] == "file://\(first.path)" && row[6] == "-", "\(added.stdout)")
            let addedJSON = try Self.cohost(s, ["output", "add", "out", "file://\(second.path)", "--json"])
            #expect((addedJSON.json as? [String: Any])?["id"] as? String == "o2")

            let list = try Self.cohost(s, ["output", "list", "out"])
            #expect(list.rows.dropFirst().map { $0.first } == ["o1", "o2"], "\(list.stdout)")
            let listJSON = try Self.cohost(s, ["output", "list", "out", "--json"])
            let show = try Self.cohost(s, ["room", "show", "out", "--json"])
            try Self.expectValid([
                Self.answer("POST", "/v1/rooms/out/outputs", 201, addedJSON.stdout),
                Self.answer("GET", "/v1/rooms/out", 200, try Self.room(show.stdout, with: "outputs", listJSON.stdout)),
            ])

            let removed = try Self.cohost(s, ["output", "remove", "out", "o1"])
            #expect(removed.status == 0 && removed.stdout == "removed output o1 from room out\n")
            let again = try Self.cohost(s, ["output", "remove", "out", "o1"])
            #expect(again.status == 1 && again.stderr == "error: not_found: no output 'o1' in room 'out'\n")
            let unsupported = try Self.cohost(s, ["output", "add", "out", "udp://127.0.0.1:9000"])
            #expect(
                unsupported.status == 1 && unsupported.stderr.hasPrefix("error: invalid_output: "),
                "\(unsupported.stderr)")
            #expect(try Self.cohost(s, ["output", "list", "out"]).rows.dropFirst().map { $0.first } == ["o2"])
        }

        @Test func sourceCommandsAddListAndRemove() async throws {
            let s = try Self.server()
            #expect(try Self.cohost(s, ["room", "create", "src", "--canvas", "160x96", "--fps", "5"]).status == 0)
            // A sound file in the media directory (the harness's is the temporary directory), played in a loop.
            let name = "cohost-cli-\(UUID().uuidString).wav"
            let path = FileManager.default.temporaryDirectory.appendingPathComponent(name).path
            defer { try? FileManager.default.removeItem(atPath: path) }
            let made = try run(
                "ffmpeg",
                ["-hide_banner", "-loglevel", "error", "-nostdin", "-f", "lavfi", "-i", "sine=f=500:d=1", path],
                timeout: 30)
            #expect(made.status == 0)
            let added = try Self.cohost(
                s, ["source", "add", "src", "music", "file://\(name)", "--loop", "--gain", "0.5"])
            #expect(
                added.status == 0
                    && added.rows.first == ["USER", "STATE", "ATTEMPT", "AUDIO", "VIDEO", "URL", "ERROR"],
                "\(added.stdout)\(added.stderr)")
            #expect(added.rows.dropFirst().first?.prefix(3) == ["music", "connecting", "0"], "\(added.stdout)")
            let live = await eventually(seconds: 10) {
                (try? Self.cohost(s, ["source", "list", "src"]))?.rows.dropFirst().first?.prefix(5)
                    == ["music", "live", "0", "yes", "no"]
            }
            #expect(live)
            let listJSON = try Self.cohost(s, ["source", "list", "src", "--json"])
            try Self.expectValid([Self.answer("GET", "/v1/rooms/src/sources", 200, listJSON.stdout)])
            let both = try Self.cohost(s, ["source", "add", "src", "x", "file://\(name)", "--listen", "srt"])
            #expect(both.status != 0 && both.stderr.contains("give a URL or --listen, not both"), "\(both.stderr)")
            let noPort = try Self.cohost(s, ["source", "add", "src", "obs", "--listen", "rtmp"])
            #expect(noPort.status == 1 && noPort.stderr.hasPrefix("error: not_implemented: "), "\(noPort.stderr)")
            let removed = try Self.cohost(s, ["source", "remove", "src", "music"])
            #expect(removed.status == 0 && removed.stdout == "removed source music from room src\n")
            let again = try Self.cohost(s, ["source", "remove", "src", "music"])
            #expect(again.status == 1 && again.stderr == "error: not_found: no source 'music' in room 'src'\n")
        }
    }
}
