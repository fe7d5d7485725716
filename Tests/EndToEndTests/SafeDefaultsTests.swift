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
                toFile: file, atomically: false, encoding: .utf8)
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

        /// A TCP listener on 127.0.0.1 that counts who connects: where the refused outputs and sources would go.
        final class Tripwire {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            let port: Int
            private var accepted = 0

            init() throws {
                #expect(Loopback.bind(fd, port: 0) && listen(fd, 16) == 0)
                port = try #require(Loopback.localPort(fd))
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            }

            deinit { close(fd) }

            var connections: Int {
                while case let peer = accept(fd, nil, nil), peer >= 0 {
                    accepted += 1
                    close(peer)
                }
                return accepted
            }
        }

        @Test func outboundDestinationsRefuseInternalAddressesUnlessListedAndSayOnlyCannotConnect() async throws {
            let wire = try Tripwire()
            let port = wire.port
            // Keys and nothing else: loopback is an internal address like any private one.
            let plain = try CohostHarness(arguments: ["--keys", "\(CohostHarness.key):\(CohostHarness.secret)"])
            let admin = plain.token(room: "out", user: "mod", admin: true)
            #expect(
                try plain.call("POST", "/v1/rooms", token: admin, body: Data(#"{"name":"out","audioOnly":true}"#.utf8))
                    .status == 201)
            func post(_ cohost: CohostHarness, _ path: String, _ body: String) throws -> (Int, String?) {
                let r = try cohost.call("POST", "/v1/rooms/out/\(path)", token: admin, body: Data(body.utf8))
                return (r.status, Self.errorCode(r.body))
            }
            // Address literals are refused at once, saying why (the URL itself names the address).
            #expect(try post(plain, "outputs", #"{"url":"rtmp://127.0.0.1:\#(port)/live/k"}"#).0 == 400)
            #expect(
                try post(plain, "sources", #"{"userId":"cam","url":"rtsp://127.0.0.1:\#(port)/cam"}"#)
                    == (403, "forbidden_destination"))
            #expect(
                try post(plain, "sources", #"{"userId":"cam","url":"http://[::1]:\#(port)/a.m3u8"}"#)
                    == (403, "forbidden_destination"))
            // A name is resolved at connect time: "localhost" is refused then, reported like a host that is down.
            #expect(try post(plain, "outputs", #"{"url":"rtmp://localhost:\#(port)/live/k"}"#).0 == 201)
            #expect(try post(plain, "sources", #"{"userId":"cam","url":"rtsp://localhost:\#(port)/cam"}"#).0 == 201)
            func states(_ cohost: CohostHarness) throws -> (output: String, source: String) {
                let room = try cohost.call("GET", "/v1/rooms/out", token: admin)
                let sources = try cohost.call("GET", "/v1/rooms/out/sources", token: admin)
                func first(_ data: Data, _ key: String) -> [String: Any] {
                    let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
                    return (json?[key] as? [[String: Any]])?.first ?? [:]
                }
                let output = first(room.body, "outputs")
                let source = first(sources.body, "sources")
                return (
                    "\(output["state"] ?? "-") \(output["error"] ?? "-")",
                    "\(source["state"] ?? "-") \(source["error"] ?? "-")"
                )
            }
            let vague = "cannot connect to localhost:\(port)"
            #expect(
                await eventually(seconds: 10) {
                    let now = (try? states(plain)) ?? (output: "", source: "")
                    return now.output == "reconnecting \(vague)" && now.source == "retrying \(vague)"
                }, "\((try? states(plain)) ?? ("", ""))")
            #expect(plain.process.output.contains("is an internal address"))
            // Listed elsewhere (another loopback address), the same: refused, nothing more said.
            let listed = try CohostHarness(
                arguments: ["--keys", "\(CohostHarness.key):\(CohostHarness.secret)", "--output-hosts", "127.0.0.2"])
            #expect(
                try listed.call("POST", "/v1/rooms", token: admin, body: Data(#"{"name":"out","audioOnly":true}"#.utf8))
                    .status == 201)
            #expect(try post(listed, "outputs", #"{"url":"srt://localhost:\#(port)?streamid=x"}"#).0 == 201)
            #expect(try post(listed, "sources", #"{"userId":"hls","url":"http://localhost:\#(port)/a.m3u8"}"#).0 == 201)
            #expect(
                await eventually(seconds: 10) {
                    let now = (try? states(listed)) ?? (output: "", source: "")
                    return now.output == "reconnecting \(vague)" && now.source == "retrying \(vague)"
                }, "\((try? states(listed)) ?? ("", ""))")
            #expect(wire.connections == 0)
            // A webhook receiver on loopback, unlisted, stops the start.
            let (status, output) = try Self.refusedStart([
                "--http", "127.0.0.1:\(try FreePort.tcp())", "--keys", "\(CohostHarness.key):\(CohostHarness.secret)",
                "--webhook-url", "http://127.0.0.1:\(port)/hook", "--webhook-secret",
                "hook-0123456789abcdef0123456789ab",
            ])
            #expect(status != 0 && output.contains("webhook_hosts"), "\(output)")
            // Where the list names 127.0.0.1, the same name connects: the tripwire would have seen a refused one.
            let allowed = try CohostHarness()
            #expect(
                try allowed.call(
                    "POST", "/v1/rooms", token: admin, body: Data(#"{"name":"out","audioOnly":true}"#.utf8)
                )
                .status == 201)
            #expect(try post(allowed, "outputs", #"{"url":"rtmp://localhost:\#(port)/live/k"}"#).0 == 201)
            #expect(await eventually(seconds: 10) { wire.connections >= 1 })
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

        @Test func nearTheConnectionCapOnlyCallersWithATokenAreServed() async throws {
            let cohost = try CohostHarness(arguments: CohostHarness.standardArguments + ["--max-connections", "20"])
            let admin = cohost.token(room: "busy", user: "mod", admin: true)
            #expect(
                try cohost.call(
                    "POST", "/v1/rooms", token: admin, body: Data(#"{"name":"busy","audioOnly":true}"#.utf8)
                )
                .status == 201)
            // Eighteen idle connections from other loopback addresses: with this test's own, into the reserve (the
            // last two of twenty), with room for its client's next connection.
            let idle = (0..<18).map { i in Self.connection(to: cohost.httpPort, from: "127.0.0.\(2 + i % 4)") }
            defer { idle.forEach { close($0) } }
            func scrape() -> String {
                guard let r = try? cohost.call("GET", "/metrics", token: admin) else { return "" }
                return String(decoding: r.body, as: UTF8.self)
            }
            #expect(
                await eventually(seconds: 5) {
                    (EndToEnd.SchemaConformanceTests.metric("cohost_http_connections", in: scrape()) ?? 0) >= 19
                })
            // Without a token: refused, and told why. The health check still answers.
            let anonymous = try cohost.call("GET", "/v1/rooms/busy", token: nil)
            #expect(anonymous.status == 503 && Self.errorCode(anonymous.body) == "server_busy")
            #expect(try cohost.call("GET", "/healthz", token: nil).status == 200)
            // A guest with a token joins.
            let guest = cohost.token(room: "busy", user: "guest")
            let joined = try cohost.call(
                "POST", "/v1/rooms/busy/participants", token: guest,
                body: Data(CohostHarness.offer(audioSSRC: 7301, videoSSRC: nil).utf8), contentType: "application/sdp")
            #expect(joined.status == 201)
            #expect(EndToEnd.SchemaConformanceTests.metric("cohost_http_requests_refused_reserve", in: scrape()) == 1)
            // Below the reserve again, everyone is served.
            idle.forEach { close($0) }
            #expect(await eventually(seconds: 5) { (try? cohost.call("GET", "/healthz", token: nil))?.status == 200 })
            #expect(
                await eventually(seconds: 5) {
                    (try? cohost.call("GET", "/v1/rooms/busy", token: nil))?.status == 401
                })
        }

        /// A socket to the harness's HTTP port from `source` (a loopback address), not blocking.
        static func connection(to port: Int, from source: String = "127.0.0.1") -> Int32 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            _ = Loopback.bind(fd, port: 0, host: source)
            _ = Loopback.connect(fd, port: port)
            return fd
        }

        /// Whether the server closed `fd` (a read gives 0 bytes; -1 with EAGAIN: still open).
        static func closedByServer(_ fd: Int32) -> Bool {
            var byte: UInt8 = 0
            return recv(fd, &byte, 1, Int32(MSG_DONTWAIT)) == 0
        }

        @Test func slowHeadersAreCutOffAtTheHeadDeadlineWhileTheServerAnswersOthers() async throws {
            let cohost = try CohostHarness()
            // Forty clients each send half a request head, then a byte every 2 s: never silent long enough for the
            // idle timeout (30 s), never finishing the head.
            let sockets = (0..<40).map { _ in Self.connection(to: cohost.httpPort) }
            defer { sockets.forEach { close($0) } }
            let half = Array("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n".utf8)
            for fd in sockets { _ = half.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } }
            let started = Date()
            var closedAfter: [Double] = []
            var open = Set(sockets)
            while !open.isEmpty && Date().timeIntervalSince(started) < 20 {
                try await Task.sleep(for: .milliseconds(250))
                for fd in open where Self.closedByServer(fd) {
                    open.remove(fd)
                    closedAfter.append(Date().timeIntervalSince(started))
                }
                if Int(Date().timeIntervalSince(started) * 4) % 8 == 0 {
                    for fd in open {
                        _ = [UInt8(ascii: "X")].withUnsafeBytes { send(fd, $0.baseAddress, 1, Int32(MSG_NOSIGNAL)) }
                    }
                }
                // Meanwhile a whole request is answered at once.
                if closedAfter.isEmpty { #expect(try cohost.call("GET", "/healthz", token: nil).status == 200) }
            }
            #expect(open.isEmpty, "\(open.count) of 40 still open after 20 s")
            #expect(closedAfter.allSatisfy { (9.5...14).contains($0) }, "closed after \(closedAfter) s")
            let scraped = String(decoding: try cohost.call("GET", "/metrics", token: nil).body, as: UTF8.self)
            #expect(
                EndToEnd.SchemaConformanceTests.metric("cohost_http_requests_timed_out", in: scraped) == 40,
                "\(scraped.prefix(1500))")
        }

        @Test func oneAddressCannotTakeEveryConnection() async throws {
            let cohost = try CohostHarness(
                arguments: CohostHarness.standardArguments + ["--max-connections-per-address", "8"])
            let crowd = (0..<12).map { _ in Self.connection(to: cohost.httpPort, from: "127.0.0.2") }
            defer { crowd.forEach { close($0) } }
            try await Task.sleep(for: .milliseconds(500))
            #expect(crowd.filter(Self.closedByServer).count == 4)
            // Another address still gets in, and is answered.
            let other = Self.connection(to: cohost.httpPort, from: "127.0.0.3")
            defer { close(other) }
            let request = Array("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8)
            _ = request.withUnsafeBytes { send(other, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            var reply = [UInt8](repeating: 0, count: 12)
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            _ = setsockopt(other, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let flags = fcntl(other, F_GETFL)
            _ = fcntl(other, F_SETFL, flags & ~O_NONBLOCK)
            #expect(recv(other, &reply, reply.count, Int32(MSG_WAITALL)) == 12)
            #expect(String(decoding: reply, as: UTF8.self) == "HTTP/1.1 200")
            let scraped = String(decoding: try cohost.call("GET", "/metrics", token: nil).body, as: UTF8.self)
            #expect(
                EndToEnd.SchemaConformanceTests.metric("cohost_http_connections_refused_per_address", in: scraped) == 4)
        }

        /// The status line of one raw request (with `headers`) to the harness's port.
        static func status(_ port: Int, _ head: String) throws -> String {
            let fd = Self.connection(to: port)
            defer { close(fd) }
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let bytes = Array(head.utf8)
            _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            // Until the head and the Content-Length of body it announces (a 101 has none), or the connection ends.
            var reply: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 1024)
            func complete(_ text: String) -> Bool {
                guard let end = text.range(of: "\r\n\r\n") else { return false }
                let length =
                    text[..<end.lowerBound].split(separator: "\r\n")
                    .first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
                return text.utf8.count - text[..<end.upperBound].utf8.count >= length
            }
            while reply.count < 8192 && !complete(String(decoding: reply, as: UTF8.self)) {
                let count = recv(fd, &chunk, chunk.count, 0)
                guard count > 0 else { break }
                reply += chunk.prefix(count)
            }
            let text = String(decoding: reply, as: UTF8.self)
            return String(text.split(separator: "\r\n").first ?? "")
                + (text.contains("host_forbidden") ? " host_forbidden" : "")
                + (text.contains("origin_forbidden") ? " origin_forbidden" : "")
        }

        @Test func aDevServerAnswersOnlyLoopbackNamesAndItsEventsOnlyItsOwnPages() async throws {
            // Dev mode: no keys, on loopback. A page on rebind.example resolving to 127.0.0.1 cannot use the
            // published dev key against it, nor can another page open its events.
            let cohost = try CohostHarness(arguments: ["--log-level", "info"])
            let port = cohost.httpPort
            #expect(
                try Self.status(port, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n")
                    == "HTTP/1.1 200 OK")
            #expect(
                try Self.status(
                    port, "GET /healthz HTTP/1.1\r\nHost: rebind.example:\(port)\r\nConnection: close\r\n\r\n")
                    == "HTTP/1.1 403 Forbidden host_forbidden")
            let admin = TestToken.mint(key: "devkey", secret: "devsecret", room: "*", user: "mod", admin: true)
            #expect(
                try cohost.call("POST", "/v1/rooms", token: admin, body: Data(#"{"name":"ws","audioOnly":true}"#.utf8))
                    .status == 201)
            func upgrade(origin: String?, host: String = "127.0.0.1:\(port)") throws -> String {
                try Self.status(
                    port,
                    "GET /v1/rooms/ws/events?token=\(admin) HTTP/1.1\r\nHost: \(host)\r\nUpgrade: websocket\r\n"
                        + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                        + "Sec-WebSocket-Version: 13\r\n" + (origin.map { "Origin: \($0)\r\n" } ?? "") + "\r\n")
            }
            #expect(try upgrade(origin: nil) == "HTTP/1.1 101 Switching Protocols")
            #expect(try upgrade(origin: "http://127.0.0.1:\(port)") == "HTTP/1.1 101 Switching Protocols")
            // A refused upgrade is refused as such (a browser shows a page no status); the same request without the
            // upgrade says why.
            #expect(try upgrade(origin: "https://evil.example") == "HTTP/1.1 400 Bad Request")
            #expect(
                try upgrade(origin: "http://rebind.example:\(port)", host: "rebind.example:\(port)")
                    == "HTTP/1.1 400 Bad Request")
            #expect(
                try Self.status(
                    port,
                    "GET /v1/rooms/ws/events?token=\(admin) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
                        + "Origin: https://evil.example\r\n\r\n") == "HTTP/1.1 403 Forbidden origin_forbidden")
        }

        @Test func aFileOutputStopsAtTheRecordingsQuotaSayingWhy() async throws {
            let recordings = FileManager.default.temporaryDirectory.appendingPathComponent("quota-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: recordings, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: recordings) }
            // Last week's show fills the directory but for 20 KB: what is there at start counts.
            try Data(repeating: 7, count: 1_048_576 - 20_000).write(to: recordings.appendingPathComponent("old.flv"))
            let cohost = try CohostHarness(
                arguments: [
                    "--keys", "\(CohostHarness.key):\(CohostHarness.secret)", "--recordings-dir", recordings.path,
                    "--recordings-max-bytes", "1048576",
                ])
            let admin = cohost.token(room: "*", user: "mod", admin: true)
            // An output wakes the room: its programme is encoded with nobody in it.
            let created = try cohost.call(
                "POST", "/v1/rooms", token: admin,
                body: Data(#"{"name":"full","outputs":[{"url":"file://show.flv"}]}"#.utf8))
            #expect(created.status == 201)
            var output: [String: Any] = [:]
            let stopped = await eventually(seconds: 30, every: .milliseconds(200)) {
                let room = try? JSONSerialization.jsonObject(
                    with: cohost.call("GET", "/v1/rooms/full", token: admin).body)
                output = ((room as? [String: Any])?["outputs"] as? [[String: Any]])?.first ?? [:]
                return output["state"] as? String == "error"
            }
            #expect(stopped, "\(output)")
            #expect(
                output["error"] as? String
                    == "the recordings directory is full: its quota of 1048576 bytes (recordings_max_bytes) is reached")
            let size =
                try FileManager.default.attributesOfItem(atPath: recordings.appendingPathComponent("show.flv").path)[
                    .size] as? Int
            #expect((1...20_000).contains(size ?? 0), "\(size ?? 0) bytes")
        }

        @Test func aRoomsRecordingsStopAtItsOwnQuotaAndAnotherRoomStillRecords() async throws {
            let recordings = FileManager.default.temporaryDirectory.appendingPathComponent("quota-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: recordings, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: recordings) }
            let cohost = try CohostHarness(
                arguments: [
                    "--keys", "\(CohostHarness.key):\(CohostHarness.secret)", "--recordings-dir", recordings.path,
                    "--recordings-room-max-bytes", "65536",
                ])
            let admin = cohost.token(room: "*", user: "mod", admin: true)
            func output(_ room: String) -> [String: Any] {
                let json = try? JSONSerialization.jsonObject(
                    with: cohost.call("GET", "/v1/rooms/\(room)", token: admin).body)
                return ((json as? [String: Any])?["outputs"] as? [[String: Any]])?.first ?? [:]
            }
            #expect(
                try cohost.call(
                    "POST", "/v1/rooms", token: admin,
                    body: Data(#"{"name":"first","outputs":[{"url":"file://first.flv"}]}"#.utf8)
                ).status == 201)
            #expect(
                await eventually(seconds: 60, every: .milliseconds(200)) {
                    output("first")["state"] as? String == "error"
                })
            #expect(
                output("first")["error"] as? String
                    == "room 'first' has written its quota of 65536 bytes of recordings (recordings_room_max_bytes)")
            let size =
                try FileManager.default.attributesOfItem(
                    atPath: recordings.appendingPathComponent("first.flv").path)[.size] as? Int
            #expect((1...65_536).contains(size ?? 0), "\(size ?? 0) bytes")
            // Another room has a quota of its own.
            #expect(
                try cohost.call(
                    "POST", "/v1/rooms", token: admin,
                    body: Data(#"{"name":"second","outputs":[{"url":"file://second.flv"}]}"#.utf8)
                ).status == 201)
            #expect(await eventually(seconds: 10) { output("second")["state"] as? String == "connected" })
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
