import Foundation
import Testing

@testable import MediaSources
import TestSupport

/// A pulled source's URL aimed at the address its host was checked for, and the HLS reader kept on that host.
@Suite struct SourceLocationTests {
    @Test func theHostIsFoundAndReplacedPastCredentialsPortsAndBrackets() throws {
        let camera = try #require(SourceLocation("rtsp://admin:p@ss@cam.example:8554/live?x=1"))
        #expect(camera.host == "cam.example" && camera.hostHeader == "cam.example:8554" && !camera.isTLS)
        #expect(camera.aimed(at: "10.0.0.7") == "rtsp://admin:p@ss@10.0.0.7:8554/live?x=1")
        let six = try #require(SourceLocation("srt://[2001:db8::1]:9000?streamid=a/b"))
        #expect(six.host == "2001:db8::1" && six.aimed(at: "2001:db8::2") == "srt://[2001:db8::2]:9000?streamid=a/b")
        let plain = try #require(SourceLocation("http://CDN.example/live/index.m3u8"))
        #expect(plain.aimed(at: "192.0.2.10") == "http://192.0.2.10/live/index.m3u8")
        #expect(plain.hostHeader == "CDN.example" && plain.scheme == "http")
        #expect(SourceLocation("https://cdn.example/a.m3u8")?.isTLS == true)
        #expect(SourceLocation("rtmp:///app") == nil && SourceLocation("no-scheme") == nil)
        // Only a port may follow the host.
        for odd in [
            "rtsp://[::1]evil.example/x", "rtsp://cam:80x/x", "rtsp://cam:1234567/x", "rtsp://[::1/x", "rtsp://a]b/x",
        ] {
            #expect(SourceLocation(odd) == nil, "\(odd)")
        }
    }

    /// An HLS playlist served on 127.0.0.1 whose segments live on `segmentHost`; `body` gets the playlist's URL and
    /// the number of connections a listener on 127.0.0.2 (the other host) has accepted so far.
    static func withPlaylist(
        absoluteSegments: Bool, _ body: (_ url: String, _ otherHostConnections: () -> Int) throws -> Void
    ) throws {
        let dir = NSTemporaryDirectory() + "cohost-hls-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let made = try run(
            "ffmpeg",
            [
                "-hide_banner", "-loglevel", "error", "-nostdin", "-y", "-f", "lavfi", "-i",
                "sine=frequency=440:sample_rate=48000", "-t", "2", "-c:a", "aac", "-f", "hls", "-hls_time", "1",
                "-hls_list_size", "0", dir + "/index.m3u8",
            ], timeout: 60)
        guard made.status == 0 else { throw TestSupportError.failed("ffmpeg: \(made.stderr)") }
        // The other host: a listener on 127.0.0.2 that only counts who connects.
        let other = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(other) }
        let bound = Loopback.bind(other, port: 0, host: "127.0.0.2")
        #expect(bound && listen(other, 8) == 0)
        let otherPort = try #require(Loopback.localPort(other))
        _ = fcntl(other, F_SETFL, fcntl(other, F_GETFL) | O_NONBLOCK)
        var accepted = 0
        func connections() -> Int {
            while case let fd = accept(other, nil, nil), fd >= 0 {
                accepted += 1
                close(fd)
            }
            return accepted
        }
        if absoluteSegments {
            let playlist = try String(contentsOfFile: dir + "/index.m3u8", encoding: .utf8)
            let moved = playlist.split(separator: "\n", omittingEmptySubsequences: false).map { line in
                line.hasSuffix(".ts") ? "http://127.0.0.2:\(otherPort)/\(line)" : String(line)
            }.joined(separator: "\n")
            try moved.write(toFile: dir + "/index.m3u8", atomically: false, encoding: .utf8)
        }
        let port = try FreePort.tcp()
        let web = ManagedProcess(
            executable: "/usr/bin/python3",
            arguments: ["-m", "http.server", "\(port)", "--bind", "127.0.0.1", "--directory", dir])
        try web.start()
        defer { web.terminate() }
        let up = (0..<200).contains { _ in
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(fd) }
            if Loopback.connect(fd, port: port) { return true }
            usleep(25_000)
            return false
        }
        #expect(up, "the playlist server did not start")
        try body("http://127.0.0.1:\(port)/index.m3u8", connections)
    }

    static let hlsOptions = ["protocol_whitelist": "http,tcp", "max_redirects": "0"]

    @Test func aPinnedHLSReaderReadsSegmentsOnItsOwnHost() throws {
        try Self.withPlaylist(absoluteSegments: false) { url, _ in
            let input = try MediaInput(url: url, options: Self.hlsOptions, timeoutMs: 5000, pinnedHost: "127.0.0.1")
            #expect(input.streams.contains { $0.kind == .audio && $0.codec == "aac" })
        }
    }

    @Test func aPlaylistNamingAnotherHostIsNotFollowedThere() throws {
        try Self.withPlaylist(absoluteSegments: true) { url, connections in
            #expect(throws: MediaInputError.self) {
                _ = try MediaInput(url: url, options: Self.hlsOptions, timeoutMs: 5000, pinnedHost: "127.0.0.1")
            }
            #expect(connections() == 0)
            // Unpinned, libavformat goes there: what the pin stops.
            _ = try? MediaInput(url: url, options: Self.hlsOptions, timeoutMs: 3000)
            #expect(connections() >= 1)
        }
    }

    /// An RTSP server on 127.0.0.2 that answers OPTIONS and redirects every DESCRIBE to `location`.
    final class RTSPRedirector: @unchecked Sendable {
        let fd: Int32
        let port: Int

        init(to location: String) throws {
            let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            fd = listener
            let bound = Loopback.bind(listener, port: 0, host: "127.0.0.2")
            guard bound, listen(listener, 4) == 0, let port = Loopback.localPort(listener) else {
                close(listener)
                throw TestSupportError.failed("cannot listen on 127.0.0.2")
            }
            self.port = port
            Thread.detachNewThread {
                while case let peer = accept(listener, nil, nil), peer >= 0 {
                    var pending = ""
                    var buffer = [UInt8](repeating: 0, count: 4096)
                    while case let n = recv(peer, &buffer, buffer.count, 0), n > 0 {
                        pending += String(decoding: buffer[..<n], as: UTF8.self)
                        while let end = pending.range(of: "\r\n\r\n") {
                            let request = String(pending[..<end.upperBound])
                            pending = String(pending[end.upperBound...])
                            let cseq =
                                request.split(separator: "\r\n").first { $0.lowercased().hasPrefix("cseq:") }
                                .map { $0.dropFirst(5).trimmingCharacters(in: .whitespaces) } ?? "1"
                            let answer =
                                request.hasPrefix("OPTIONS")
                                ? "RTSP/1.0 200 OK\r\nCSeq: \(cseq)\r\nPublic: OPTIONS, DESCRIBE, SETUP, PLAY, TEARDOWN\r\n\r\n"
                                : "RTSP/1.0 302 Found\r\nCSeq: \(cseq)\r\nLocation: \(location)\r\n\r\n"
                            _ = answer.withCString { send(peer, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
                        }
                    }
                    close(peer)
                }
            }
        }

        deinit {
            shutdown(fd, Int32(SHUT_RDWR))
            close(fd)
        }
    }

    @Test func anRTSPServerRedirectingToAnotherHostIsNotRead() throws {
        let camera = try RTSPCamera(colour: "0xff00c000", toneHz: 440)
        defer { camera.stop() }
        let redirector = try RTSPRedirector(to: camera.url)
        let url = "rtsp://127.0.0.2:\(redirector.port)/cam"
        let options = ["rtsp_transport": "tcp", "protocol_whitelist": "rtsp,rtsps,rtp,srtp,udp,tcp,tls"]
        #expect {
            try MediaInput(url: url, options: options, timeoutMs: 5000, pinnedHost: "127.0.0.2")
        } throws: { error in
            (error as? MediaInputError)?.message == "cannot open the input: it redirected to another host"
        }
        // Unpinned, libavformat follows the redirect and reads the camera: what the check stops.
        let followed = try MediaInput(url: url, options: options, timeoutMs: 5000)
        #expect(followed.streams.contains { $0.kind == .video })
    }
}
