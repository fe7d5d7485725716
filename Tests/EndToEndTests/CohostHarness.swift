import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Rooms
import TestSupport

/// A real `cohost serve` process on free loopback ports, with an HTTP client for its API.
final class CohostHarness: @unchecked Sendable {
    static let key = "testkey"
    /// 32 bytes or more: cohost refuses shorter secrets.
    static let secret = "testsecret-0123456789abcdef-0123456789"
    /// The arguments the harness gives besides ports: keys, rooms created on join (as most suites expect), the
    /// system's temporary directory as the recordings and media directory (suites write outputs and files to pull
    /// below it), and 127.0.0.1 as the one host outputs, sources and webhooks may reach (nginx-rtmp, cameras and
    /// receivers all run there; a refusal is shown with another loopback address).
    static let standardArguments = [
        "--keys", "\(key):\(secret)", "--log-level", "info", "--auto-create-rooms", "true",
        "--recordings-dir", FileManager.default.temporaryDirectory.path,
        "--media-dir", FileManager.default.temporaryDirectory.path,
        "--output-hosts", "127.0.0.1", "--webhook-hosts", "127.0.0.1",
    ]
    let httpPort: Int
    let rtpPort: Int
    let process: ManagedProcess
    /// Its own store's directory, so no server sees another's rooms (removed when the harness goes).
    let dataDir: String

    /// Whether `dataDir` is the harness's own, removed with it (not when a test gave one to restart on).
    private let ownsDataDir: Bool

    /// `arguments` replace `standardArguments`; `environment` is added to the process's. `dataDir`: the store's
    /// directory to use (and keep), for a server started again on the same rooms.
    init(
        arguments: [String] = CohostHarness.standardArguments, environment: [String: String] = [:],
        dataDir given: String? = nil
    ) throws {
        var lastError: (any Error)?
        let dataDir =
            given
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("cohost-data-\(UUID().uuidString)").path
        ownsDataDir = given == nil
        for _ in 0..<5 {
            let http = try FreePort.tcp()
            let rtp = try UDPPortPair.find()
            let process = ManagedProcess(
                executable: Self.binary,
                arguments: ["serve", "--http", "127.0.0.1:\(http)", "--rtp-port", "\(rtp)", "--data-dir", dataDir]
                    + arguments,
                environment: environment, captureOutput: true)
            do {
                try process.start()
                try Self.waitForHealth(port: http, process: process)
                self.httpPort = http
                self.rtpPort = rtp
                self.process = process
                self.dataDir = dataDir
                return
            } catch {
                lastError = error
                process.terminate()
            }
        }
        throw lastError ?? HarnessError("cohost did not start")
    }

    deinit {
        process.terminate()
        if ownsDataDir { try? FileManager.default.removeItem(atPath: dataDir) }
    }

    /// The binary `make test` built (COHOST_BIN), else the debug build next to the tests.
    static var binary: String {
        if let path = ProcessInfo.processInfo.environment["COHOST_BIN"], !path.isEmpty { return path }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug/cohost").path
    }

    static func waitForHealth(port: Int, process: ManagedProcess) throws {
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline {
            if let (status, _) = try? HTTP.request("GET", "http://127.0.0.1:\(port)/healthz"), status == 200 { return }
            guard process.isRunning else { throw HarnessError("cohost exited: \(process.output)") }
            Thread.sleep(forTimeInterval: 0.1)
        }
        throw HarnessError("cohost did not answer /healthz within 15 s: \(process.output)")
    }

    func token(room: String, user: String, admin: Bool = false, viewer: Bool = false, ttl: Int64 = 600) -> String {
        TestToken.mint(
            key: Self.key, secret: Self.secret, room: room, user: user, admin: admin, viewer: viewer,
            exp: Int64(Date().timeIntervalSince1970) + ttl)
    }

    func url(_ path: String) -> String { "http://127.0.0.1:\(httpPort)\(path)" }

    func call(
        _ method: String, _ path: String, token: String?, body: Data? = nil,
        contentType: String = "application/json", headers: [String: String] = [:]
    ) throws -> (status: Int, body: Data, headers: [String: String]) {
        try HTTP.requestWithHeaders(
            method, url(path), token: token, body: body, contentType: contentType, headers: headers)
    }

    static func offer(audioSSRC: UInt32, videoSSRC: UInt32?) -> String {
        TestOffer.plain(audio: audioSSRC, video: videoSSRC.map { .vp8($0) })
    }
}

extension CohostHarness {
    /// An H.264 (packetization mode 1, payload type 102) video-only offer.
    static func h264Offer(ssrc: UInt32) -> String { TestOffer.plain(audio: nil, video: .h264(ssrc)) }

    /// A participant's stream statistics from `GET /v1/rooms/{room}`, by kind ("audio", "video").
    func streams(admin: String, room: String, user: String) throws -> [String: [String: Any]] {
        try participantList("streams", admin: admin, room: room, user: user)
    }

    /// A participant's return streams (`returns` in `GET /v1/rooms/{room}`) by kind.
    func returns(admin: String, room: String, user: String) throws -> [String: [String: Any]] {
        try participantList("returns", admin: admin, room: room, user: user)
    }

    /// The entries of a participant's list `key` in `GET /v1/rooms/{room}`, by their `kind`.
    private func participantList(
        _ key: String, admin: String, room: String, user: String
    ) throws
        -> [String: [String: Any]]
    {
        let info = try call("GET", "/v1/rooms/\(room)", token: admin)
        let json = try JSONSerialization.jsonObject(with: info.body) as? [String: Any]
        let participant = (json?["participants"] as? [[String: Any]] ?? []).first { $0["userId"] as? String == user }
        var byKind: [String: [String: Any]] = [:]
        for entry in participant?[key] as? [[String: Any]] ?? [] {
            if let kind = entry["kind"] as? String { byKind[kind] = entry }
        }
        return byKind
    }
}

struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

/// Blocking HTTP for tests, over URLSession.
enum HTTP {
    static func request(
        _ method: String, _ url: String, token: String? = nil, body: Data? = nil,
        contentType: String = "application/json"
    ) throws -> (Int, Data) {
        let r = try requestWithHeaders(method, url, token: token, body: body, contentType: contentType)
        return (r.status, r.body)
    }

    static func requestWithHeaders(
        _ method: String, _ url: String, token: String?, body: Data?,
        contentType: String, headers extra: [String: String] = [:]
    ) throws -> (status: Int, body: Data, headers: [String: String]) {
        var request = URLRequest(url: URL(string: url)!, timeoutInterval: 10)
        request.httpMethod = method
        for (name, value) in extra { request.setValue(value, forHTTPHeaderField: name) }
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let body {
            request.httpBody = body
            request.setValue(contentType, forHTTPHeaderField: "Content-Type")
        }
        let box = ResultBox()
        let done = DispatchSemaphore(value: 0)
        URLSession.shared.dataTask(with: request) { data, response, error in
            box.set(data, response as? HTTPURLResponse, error)
            done.signal()
        }.resume()
        guard done.wait(timeout: .now() + 15) == .success else { throw HarnessError("\(method) \(url) timed out") }
        let (data, response, error) = box.get()
        if let error { throw error }
        guard let response else { throw HarnessError("no HTTP response") }
        var headers: [String: String] = [:]
        for (k, v) in response.allHeaderFields { headers["\(k)".lowercased()] = "\(v)" }
        return (response.statusCode, data ?? Data(), headers)
    }

    private final class ResultBox: @unchecked Sendable {
        private let lock = NSLock()
        private var value: (Data?, HTTPURLResponse?, (any Error)?) = (nil, nil, nil)
        func set(_ d: Data?, _ r: HTTPURLResponse?, _ e: (any Error)?) { lock.withLock { value = (d, r, e) } }
        func get() -> (Data?, HTTPURLResponse?, (any Error)?) { lock.withLock { value } }
    }
}

/// Two adjacent free UDP ports (RTP, and RTCP above it).
enum UDPPortPair {
    static func find() throws -> Int {
        for _ in 0..<50 {
            let p = try FreePort.udp()
            guard p < 65535, canBind(p + 1) else { continue }
            return p
        }
        throw HarnessError("no two adjacent free UDP ports")
    }

    static func canBind(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return Loopback.bind(fd, port: port)
    }
}

/// An ffmpeg participant: a solid colour and a sine tone as VP8 + Opus over RTP.
func startFFmpegParticipant(
    rtpPort: Int, colour: String, toneHz: Int, audioSSRC: UInt32, videoSSRC: UInt32?
) throws -> ManagedProcess {
    try ffmpegParticipant(rtpPort: rtpPort, colour: colour, toneHz: toneHz, audioSSRC: audioSSRC, videoSSRC: videoSSRC)
        .start()
}

/// The participant `startFFmpegParticipant` starts, not started yet (to be `prerendered`, say).
func ffmpegParticipant(rtpPort: Int, colour: String, toneHz: Int, audioSSRC: UInt32, videoSSRC: UInt32?) -> FFmpegSender
{
    FFmpegSender(
        audio: "sine=frequency=\(toneHz):sample_rate=48000",
        video: videoSSRC.map { _ in "color=c=\(colour):s=320x180:r=15" },
        audioSSRC: audioSSRC, videoSSRC: videoSSRC, port: rtpPort)
}

/// An ffmpeg participant: lavfi `audio` (and `video`) sources sent as Opus (PT 111) and VP8 (PT 96) over RTP,
/// the way every end-to-end test's senders are made.
struct FFmpegSender {
    var audio: String
    var video: String?
    var audioSSRC: UInt32
    var videoSSRC: UInt32?
    /// Where both streams go, unless `videoURL` sends video elsewhere (a relay).
    var port: Int
    var videoURL: String?
    var videoBitrate = "200k"
    var gop = 15
    /// Options for each RTP output (e.g. SRTP keys), placed before its URL; `scheme` rtp or srtp.
    var outputOptions: [String] = []
    var scheme = "rtp"
    /// Extra options of the video output only (e.g. `-seq`).
    var videoOptions: [String] = []
    /// A file holding `audio` and `video` already encoded (`prerendered(seconds:)`), sent as it is.
    private(set) var clip: String?

    var arguments: [String] {
        var args = ["-hide_banner", "-loglevel", "error", "-re"]
        if let clip {
            args += ["-i", clip]
        } else {
            args += ["-f", "lavfi", "-i", audio] + (video.map { ["-f", "lavfi", "-i", $0] } ?? [])
        }
        let url = "\(scheme)://127.0.0.1:\(port)?pkt_size=1200"
        if video != nil, let videoSSRC {
            args +=
                ["-map", clip == nil ? "1:v" : "0:v"] + (clip == nil ? videoEncoder : ["-c:v", "copy"])
                + ["-ssrc", "\(videoSSRC)", "-payload_type", "96"] + videoOptions
                + ["-f", "rtp"] + outputOptions + [videoURL ?? url]
        }
        return args + ["-map", "0:a"] + (clip == nil ? audioEncoder : ["-c:a", "copy"])
            + ["-ssrc", "\(audioSSRC)", "-payload_type", "111", "-f", "rtp"] + outputOptions + [url]
    }

    private var videoEncoder: [String] {
        ["-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "8", "-b:v", videoBitrate, "-g", "\(gop)"]
    }
    private var audioEncoder: [String] { ["-c:a", "libopus", "-b:a", "64k", "-application", "audio"] }

    /// The same participant, its first `seconds` encoded now (as fast as the machine goes) into a file in `directory`
    /// and sent from there in real time. Encoding live, ffmpeg falls behind the wall clock on a busy machine: its
    /// pictures and sound then arrive late by different amounts and its sender reports stop matching them, which a
    /// test of timing would blame on Cohost. Copying packets from a file keeps to the clock on a busy machine.
    func prerendered(seconds: Int, directory: String = NSTemporaryDirectory()) throws -> FFmpegSender {
        let path = directory + "/cohost-clip-\(UUID().uuidString).mkv"
        var args = ["-hide_banner", "-loglevel", "error", "-nostdin", "-f", "lavfi", "-i", audio]
        if let video { args += ["-f", "lavfi", "-i", video, "-map", "1:v"] + videoEncoder }
        args += ["-map", "0:a"] + audioEncoder + ["-t", "\(seconds)", "-y", path]
        let result = try run("ffmpeg", args, timeout: Double(10 * seconds))
        guard result.status == 0 else { throw TestSupportError.failed("rendering \(path) failed: \(result.stderr)") }
        var copy = self
        copy.clip = path
        return copy
    }

    /// Deletes the file `prerendered(seconds:)` made, if any.
    func removeClip() {
        if let clip { try? FileManager.default.removeItem(atPath: clip) }
    }

    func start() throws -> ManagedProcess {
        let p = ManagedProcess(executable: "ffmpeg", arguments: arguments, captureOutput: true)
        try p.start()
        return p
    }
}

/// Sends raw datagrams to a loopback UDP port from a fresh socket (so from an address no stream latched).
func sendDatagrams(_ datagrams: [[UInt8]], toPort port: Int) {
    let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
    guard fd >= 0 else { return }
    defer { close(fd) }
    for d in datagrams {
        _ = d.withUnsafeBytes { bytes in
            Loopback.withSockaddr(port: port) { sendto(fd, bytes.baseAddress, bytes.count, 0, $0, $1) }
        }
    }
}

/// Datagrams a hostile or broken sender might produce, aimed at `ssrc`: garbage, truncated headers,
/// lying lengths, RTCP with bad lengths, and well-formed packets for the SSRC from a foreign address.
func hostileDatagrams(ssrc: UInt32, count: Int) -> [[UInt8]] {
    var rng = SystemRandomNumberGenerator()
    let s = [UInt8(ssrc >> 24), UInt8(ssrc >> 16 & 0xFF), UInt8(ssrc >> 8 & 0xFF), UInt8(ssrc & 0xFF)]
    var out: [[UInt8]] = [[], [0x80], [0x80, 0x60, 0, 1], [0x80, 0x60, 0, 1, 0, 0, 0, 1] + s.prefix(2)]
    out.append([0x8F, 0x60, 0, 1, 0, 0, 0, 1] + s)  // 15 CSRCs, none present
    out.append([0x90, 0x60, 0, 1, 0, 0, 0, 1] + s + [0xBE, 0xDE, 0xFF, 0xFF])  // extension length past the end
    out.append([0xA0, 0x60, 0, 1, 0, 0, 0, 1] + s + [1, 2, 3, 200])  // padding longer than the payload
    out.append([0x81, 0xC8, 0xFF, 0xFF] + s)  // RTCP SR with a lying length
    for i in 0..<count {
        let n = Int.random(in: 0...1400, using: &rng)
        var d = (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) }
        if i % 2 == 0, d.count >= 12 {
            d[0] = 0x80
            d[1] = 0x60
            d.replaceSubrange(8..<12, with: s)
        }  // valid header, garbage VP8
        out.append(d)
    }
    return out
}
