import Foundation
import Rooms
import Testing
import TestSupport

extension EndToEnd {
    /// What an exposed `cohost serve` refuses, through the real binary. Every address here is on loopback, and
    /// the refused ones are refused before any connection is tried.
    @Suite struct SafeDefaultsTests {
        /// Runs `cohost serve` with `arguments` and returns its exit status and output; it must exit by itself.
        static func refusedStart(_ arguments: [String], environment: [String: String] = [:]) throws -> (Int32, String) {
            let process = ManagedProcess(
                executable: CohostHarness.binary, arguments: ["serve", "--store", "none"] + arguments,
                environment: environment,
                captureOutput: true)
            try process.start()
            defer { process.terminate() }
            let status = try #require(process.waitForExit(timeout: 10), "cohost kept running: \(process.output)")
            return (status, process.output)
        }

        static func errorCode(_ body: Data) -> String? {
            let json = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
            return (json?["error"] as? [String: Any])?["code"] as? String
        }

        @Test func devModeAndWeakSecretsAreRefusedAtStartAndAKeysFileWorks() throws {
            let port = try FreePort.tcp()
            let (devStatus, devOutput) = try Self.refusedStart(["--http", "0.0.0.0:\(port)"])
            #expect(devStatus != 0 && devOutput.contains("--keys") && devOutput.contains("COHOST_KEYS"), "\(devOutput)")
            // Keys, but /metrics open to the network: refused too.
            let (metricsStatus, metricsOutput) = try Self.refusedStart(
                ["--http", "0.0.0.0:\(port)", "--keys", "\(CohostHarness.key):\(CohostHarness.secret)"])
            #expect(metricsStatus != 0 && metricsOutput.contains("--metrics-token"), "\(metricsOutput)")
            let (shortStatus, shortOutput) = try Self.refusedStart(
                ["--http", "127.0.0.1:\(port)", "--keys", "k1:sixteen-bytes!"])
            #expect(shortStatus != 0 && shortOutput.contains("at least 32"), "\(shortOutput)")
            #expect(!shortOutput.contains("sixteen-bytes!"))
            let (placeholderStatus, _) = try Self.refusedStart(
                ["--http", "127.0.0.1:\(port)"], environment: ["COHOST_KEYS": "prod1:change-me-to-a-long-random-secret"]
            )
            #expect(placeholderStatus != 0)

            // Keys from a file: nothing secret on the command line.
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("cohost-keys-\(UUID())").path
            try "# keys\n\(CohostHarness.key):\(CohostHarness.secret)\n".write(
                toFile: file, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(atPath: file) }
            let cohost = try CohostHarness(arguments: ["--keys-file", file])
            let admin = cohost.token(room: "filed", user: "mod", admin: true)
            #expect(
                try cohost.call("POST", "/v1/rooms", token: admin, body: Data(#"{"name":"filed"}"#.utf8)).status == 201)
            #expect(!cohost.process.output.contains(CohostHarness.secret))
        }

        @Test func outputsStayInsideTheRecordingsDirectoryAndTheAllowedHosts() async throws {
            let root = FileManager.default.temporaryDirectory.appendingPathComponent("cohost-safe-\(UUID())").path
            defer { try? FileManager.default.removeItem(atPath: root) }
            let recordings = root + "/recordings"
            // A data directory others may read, as an operator might make it: the server closes it.
            let data = root + "/data"
            try FileManager.default.createDirectory(
                atPath: data, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
            let cohost = try CohostHarness(
                arguments: ["--keys", "\(CohostHarness.key):\(CohostHarness.secret)", "--recordings-dir", recordings],
                environment: ["COHOST_OUTPUT_HOSTS": "127.0.0.1"], dataDir: data)
            func mode(_ path: String) -> Int {
                ((try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? Int) ?? -1
            }
            #expect(mode(data) == 0o700 && mode(data + "/cohost.db") == 0o600 && mode(recordings) == 0o700)
            let admin = cohost.token(room: "rec", user: "mod", admin: true)
            #expect(
                try cohost.call("POST", "/v1/rooms", token: admin, body: Data(#"{"name":"rec","audioOnly":true}"#.utf8))
                    .status == 201)
            // The recordings directory was made at start.
            #expect(FileManager.default.fileExists(atPath: recordings))
            try FileManager.default.createSymbolicLink(atPath: recordings + "/out", withDestinationPath: root)

            func add(_ url: String) throws -> (Int, String?) {
                let r = try cohost.call(
                    "POST", "/v1/rooms/rec/outputs", token: admin, body: Data("{\"url\":\"\(url)\"}".utf8))
                return (r.status, Self.errorCode(r.body))
            }
            for url in [
                "file://\(root)/escaped.flv", "file://../escaped.flv", "file://out/escaped.flv",
                "file:///etc/cohost-x.flv",
            ] {
                let (status, code) = try add(url)
                #expect(status == 400 && code == "output_path_forbidden", "\(url): \(status) \(code ?? "-")")
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: root).sorted() == ["data", "recordings"])
            #expect(!FileManager.default.fileExists(atPath: "/etc/cohost-x.flv"))
            for url in ["rtmp://127.0.0.2/live/k", "rtmp://169.254.169.254/live/k", "rtmp://[fe80::1]/live/k"] {
                let (status, code) = try add(url)
                #expect(status == 400 && code == "output_host_forbidden", "\(url): \(status) \(code ?? "-")")
            }
            // Inside, it records.
            let (status, _) = try add("file://show.flv")
            #expect(status == 201)
            // The file is opened on the output's own thread, just after the answer.
            #expect(await eventually(seconds: 5) { FileManager.default.fileExists(atPath: recordings + "/show.flv") })
            #expect(mode(recordings + "/show.flv") == 0o600)
        }

        @Test func tokensRoomsAndMetricsFollowTheOperatorsRules() throws {
            let metricsToken = "metrics-0123456789abcdef"
            let cohost = try CohostHarness(
                arguments: [
                    "--keys", "\(CohostHarness.key):\(CohostHarness.secret)", "--max-token-ttl", "3600",
                    "--metrics-token", metricsToken,
                ])
            // A participant's join does not create a room on a server with keys.
            let guest = cohost.token(room: "nowhere", user: "guest")
            let join = try cohost.call(
                "POST", "/v1/rooms/nowhere/participants", token: guest,
                body: Data(CohostHarness.offer(audioSSRC: 4242, videoSSRC: nil).utf8), contentType: "application/sdp")
            #expect(join.status == 404 && Self.errorCode(join.body) == "not_found")
            #expect(
                try cohost.call("GET", "/v1/rooms/nowhere", token: cohost.token(room: "*", user: "m", admin: true))
                    .status == 404)
            // A token that lives longer than the server allows.
            let long = cohost.token(room: "*", user: "m", admin: true, ttl: 2 * 3600)
            let refused = try cohost.call("GET", "/v1/rooms", token: long)
            #expect(refused.status == 401 && Self.errorCode(refused.body) == "token_lifetime_too_long")
            // A participant token cannot create a room (refused before the body is read).
            let created = try cohost.call(
                "POST", "/v1/rooms", token: cohost.token(room: "x", user: "g"), body: Data("{".utf8))
            #expect(created.status == 403 && Self.errorCode(created.body) == "forbidden")
            // /metrics needs its token.
            let open = try HTTP.requestWithHeaders(
                "GET", cohost.url("/metrics"), token: nil, body: nil, contentType: "")
            #expect(open.status == 401 && Self.errorCode(open.body) == "metrics_token_required")
            let scraped = try HTTP.requestWithHeaders(
                "GET", cohost.url("/metrics"), token: metricsToken, body: nil, contentType: "")
            #expect(scraped.status == 200 && String(decoding: scraped.body, as: UTF8.self).contains("cohost_rooms"))
        }

        @Test func connectionsBeyondMaxConnectionsAreClosedAndCountedAndTheServerStillAnswers() async throws {
            let cohost = try CohostHarness(arguments: CohostHarness.standardArguments + ["--max-connections", "16"])
            // Twenty idle connections that never send a byte: the ones beyond sixteen (less any the harness's own
            // client keeps open) are closed by the server at once.
            let sockets = (0..<20).map { _ in socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0) }
            defer { sockets.forEach { close($0) } }
            for fd in sockets { #expect(Loopback.connect(fd, port: cohost.httpPort)) }
            try await Task.sleep(for: .milliseconds(500))
            let closed = sockets.filter { fd in
                var byte: UInt8 = 0
                return recv(fd, &byte, 1, Int32(MSG_DONTWAIT)) == 0  // 0: the peer closed; -1 EAGAIN: still open
            }.count
            #expect((4...6).contains(closed), "\(closed) of 20 closed")
            sockets.forEach { close($0) }
            var scraped = ""
            #expect(
                await eventually(seconds: 5, every: .milliseconds(100)) {
                    guard let r = try? cohost.call("GET", "/metrics", token: nil), r.status == 200 else { return false }
                    scraped = String(decoding: r.body, as: UTF8.self)
                    return true
                })
            #expect(
                EndToEnd.SchemaConformanceTests.metric("cohost_http_connections_refused", in: scraped)
                    == Double(closed),
                "\(scraped.prefix(2000))")
        }

        @Test func anEventsSocketClosesWhenItsTokenExpiresAndOneTokenHoldsAtMostFour() async throws {
            let cohost = try CohostHarness()
            let admin = cohost.token(room: "ws", user: "mod", admin: true)
            #expect(
                try cohost.call("POST", "/v1/rooms", token: admin, body: Data(#"{"name":"ws","audioOnly":true}"#.utf8))
                    .status == 201)
            let base = "ws://127.0.0.1:\(cohost.httpPort)/v1/rooms/ws/events?token="
            let brief = SocketLog(url: base + cohost.token(room: "ws", user: "brief", ttl: 3))
            defer { brief.stop() }
            try await brief.waitUntilConnected()
            #expect(await eventually(seconds: 8) { brief.isClosed })

            let sockets = (0..<4).map { _ in SocketLog(url: base + admin) }
            defer { sockets.forEach { $0.stop() } }
            for socket in sockets { try await socket.waitUntilConnected() }
            let fifth = try cohost.call("GET", "/v1/rooms/ws/events?token=\(admin)", token: nil)
            #expect(fifth.status == 429 && Self.errorCode(fifth.body) == "too_many_sockets")
            // Another token is not counted against this one.
            let other = SocketLog(url: base + cohost.token(room: "ws", user: "mod2", admin: true))
            defer { other.stop() }
            try await other.waitUntilConnected()
            #expect(!other.isClosed)
        }
    }
}
