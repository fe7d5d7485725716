import Foundation
import MediaSources
import Publishing

/// The body of `POST /v1/rooms/{room}/sources` (protocol/openapi.yaml `SourceRequest`).
public struct SourceRequest: Decodable, Sendable {
    public var userId: String
    public var url: String?
    public var listen: String?
    public var loop: Bool?
    public var gain: Double?
    public var transport: String?
    public var latencyMs: Int?

    private enum CodingKeys: String, CodingKey { case userId, url, listen, loop, gain, transport, latencyMs }

    /// `url` and `listen` say what kind of source this is: null is not "absent" for them, it is refused.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        for key in [CodingKeys.url, .listen] where c.contains(key) {
            guard try c.decodeNil(forKey: key) else { continue }
            throw DecodingError.valueNotFound(
                String.self, .init(codingPath: [key], debugDescription: "\(key.rawValue) must be a string, not null"))
        }
        userId = try c.decode(String.self, forKey: .userId)
        url = try c.decodeIfPresent(String.self, forKey: .url)
        listen = try c.decodeIfPresent(String.self, forKey: .listen)
        loop = try c.decodeIfPresent(Bool.self, forKey: .loop)
        gain = try c.decodeIfPresent(Double.self, forKey: .gain)
        transport = try c.decodeIfPresent(String.self, forKey: .transport)
        latencyMs = try c.decodeIfPresent(Int.self, forKey: .latencyMs)
    }

    public init(
        userId: String, url: String? = nil, listen: String? = nil, loop: Bool? = nil, gain: Double? = nil,
        transport: String? = nil, latencyMs: Int? = nil
    ) {
        self.userId = userId
        self.url = url
        self.listen = listen
        self.loop = loop
        self.gain = gain
        self.transport = transport
        self.latencyMs = latencyMs
    }
}

/// A pulled source as checked against the server's rules: what the reader opens, and what may be shown of it.
struct SourcePlan: Sendable {
    var userId: String
    var input: SourceInput
    /// The URL without credentials or secrets: the only form that reaches logs, events and the API.
    var shownURL: String
    var loop: Bool
    var gain: Float
    var transport: String?
    /// A pushed source: the `room/key` stream id its encoder must give, and the URL to push to (it holds the key:
    /// shown to admins in the API, never in events or logs).
    var streamID: String?
    var publishURL: String?
    /// `rtmp` or `srt` for a pushed source.
    var listen: String? = nil
}

/// What pulled sources may read: network inputs to allowed destinations, and files in the media directory.
public struct SourceRules: Sendable {
    public var mediaDirectory: MediaDirectory?
    public var destinations: DestinationPolicy
    public var maxPerRoom: Int
    public var maxTotal: Int
    /// The SRT and RTMP ports encoders push to (`listen`); 0: none.
    public var srtPort: Int
    public var rtmpPort: Int
    /// The buffer a live source is played behind, unless the request says.
    public var defaultLatencyMs: Int

    public init(
        mediaDirectory: MediaDirectory? = nil, destinations: DestinationPolicy = DestinationPolicy(),
        maxPerRoom: Int = 8, maxTotal: Int = 64, defaultLatencyMs: Int = 500, srtPort: Int = 0, rtmpPort: Int = 0
    ) {
        self.srtPort = srtPort
        self.rtmpPort = rtmpPort
        self.mediaDirectory = mediaDirectory
        self.destinations = destinations
        self.maxPerRoom = maxPerRoom
        self.maxTotal = maxTotal
        self.defaultLatencyMs = defaultLatencyMs
    }
}

extension SourceRequest {
    static let schemes = ["rtsp", "rtsps", "rtmp", "rtmps", "srt", "http", "https", "file"]
    static let maxLatencyMs = 5000
    /// A file plays in real time; its buffer is how long the reader thread may be held up (a busy machine) without
    /// the mix running dry.
    static let fileLatencyMs = 400

    func plan(rules: SourceRules, room: RoomConfig) throws(RoomError) -> SourcePlan {
        guard Identifier.isValid(userId) else {
            throw .badRequest("invalid_user", "userId must be 1-64 characters of letters, digits, '-', '_' or '.'")
        }
        if let listen {
            if url != nil { throw .badRequest("invalid_source", "give url (a pull) or listen (a push), not both") }
            guard listen == "srt" || listen == "rtmp" else {
                throw .badRequest("invalid_source", "listen must be \"rtmp\" or \"srt\"")
            }
            throw RoomError(
                .notImplemented, "not_implemented",
                "this server has no \(listen.uppercased()) port for pushes (\(listen)_port is 0)")
        }
        guard let url, !url.isEmpty, url.utf8.count <= 2048 else {
            throw .badRequest("invalid_source", "url is required (at most 2048 bytes)")
        }
        guard !url.unicodeScalars.contains(where: { $0.value < 0x20 || $0 == "\u{7F}" }) else {
            throw .badRequest("invalid_source", "url has control characters")
        }
        let scheme = url.range(of: "://").map { url[..<$0.lowerBound].lowercased() } ?? ""
        guard Self.schemes.contains(scheme) else {
            throw .badRequest(
                "invalid_source",
                "url must be rtsp://, rtmp://, srt://, http(s):// (HLS) or file:// (the media directory)")
        }
        if let gain, !(gain.isFinite && gain >= 0 && gain <= 4) {
            throw .badRequest("invalid_source", "gain must be between 0 and 4")
        }
        if let latencyMs, !(0...Self.maxLatencyMs).contains(latencyMs) {
            throw .badRequest("invalid_source", "latencyMs must be between 0 and \(Self.maxLatencyMs)")
        }
        if let transport, transport != "tcp" && transport != "udp" {
            throw .badRequest("invalid_source", "transport must be \"tcp\" or \"udp\"")
        }
        if transport != nil && !scheme.hasPrefix("rtsp") {
            throw .badRequest("invalid_source", "transport applies to rtsp:// sources only")
        }
        let shown = SourceURL.redacted(url)
        var options: [String: String] = [
            // Start within a second: cameras send a keyframe at least that often, and probing longer only delays.
            "analyzeduration": "1000000", "probesize": "2000000",
        ]
        let location: String
        let isFile = scheme == "file"
        if isFile {
            guard let directory = rules.mediaDirectory else {
                throw .forbidden("file sources need a media directory (--media-dir)")
            }
            location = try directory.path(for: url)
            options["protocol_whitelist"] = "file"
            // Plain media containers only: a playlist or concat script could name files outside the directory.
            options["format_whitelist"] = MediaDirectory.formats
        } else {
            guard let host = SourceLocation(url)?.host else {
                throw .badRequest("invalid_source", "url needs a host, followed by nothing but a port")
            }
            if let refusal = rules.destinations.refusal(host: host) {
                throw .forbidden("forbidden_destination", "source url refused: \(refusal)")
            }
            location = url
            switch scheme {
            case "rtsp", "rtsps":
                options["rtsp_transport"] = transport ?? "tcp"
                options["protocol_whitelist"] = "rtsp,rtsps,rtp,srtp,udp,tcp,tls"
            case "rtmp", "rtmps":
                options["protocol_whitelist"] = "rtmp,rtmps,tcp,tls"
            case "srt":
                options["protocol_whitelist"] = "srt"
            default:
                // HLS: the playlist and its segments over http(s) only (never file: or another protocol).
                options["protocol_whitelist"] = "http,https,tcp,tls,crypto"
                // A redirect would lead past the destination check made for this host.
                options["max_redirects"] = "0"
            }
        }
        let live = !isFile
        return SourcePlan(
            userId: userId,
            input: SourceInput(
                location: location, isFile: isFile, loop: loop ?? false,
                latencyMs: latencyMs ?? (live ? rules.defaultLatencyMs : Self.fileLatencyMs), options: options,
                wantsVideo: !room.audioOnly, maxWidth: room.maxVideoSize.width, maxHeight: room.maxVideoSize.height),
            shownURL: shown, loop: loop ?? false, gain: Float(gain ?? 1), transport: transport)
    }
}

extension SourceRequest {
    /// A source an encoder pushes to `host:port` with a fresh key, over `listen` (rtmp or srt): the listener lets
    /// `room/key` in.
    func planPush(rules: SourceRules, room: RoomConfig, host: String, port: Int) throws(RoomError) -> SourcePlan {
        guard Identifier.isValid(userId) else {
            throw .badRequest("invalid_user", "userId must be 1-64 characters of letters, digits, '-', '_' or '.'")
        }
        guard url == nil else { throw .badRequest("invalid_source", "give url (a pull) or listen (a push), not both") }
        if let gain, !(gain.isFinite && gain >= 0 && gain <= 4) {
            throw .badRequest("invalid_source", "gain must be between 0 and 4")
        }
        if let latencyMs, !(0...Self.maxLatencyMs).contains(latencyMs) {
            throw .badRequest("invalid_source", "latencyMs must be between 0 and \(Self.maxLatencyMs)")
        }
        if transport != nil || loop != nil {
            throw .badRequest("invalid_source", "transport and loop apply to pulled sources only")
        }
        var bytes = [UInt8](repeating: 0, count: 16)
        for i in bytes.indices { bytes[i] = UInt8.random(in: 0...255) }
        let key = bytes.map { String(format: "%02x", $0) }.joined()
        let streamID = "\(room.name)/\(key)"
        let base = listen == "rtmp" ? "rtmp://\(host):\(port)/" : "srt://\(host):\(port)?streamid="
        return SourcePlan(
            userId: userId,
            input: SourceInput(
                location: "", isFile: false, loop: false, latencyMs: latencyMs ?? rules.defaultLatencyMs, options: [:],
                wantsVideo: !room.audioOnly, maxWidth: room.maxVideoSize.width, maxHeight: room.maxVideoSize.height,
                pushed: true),
            shownURL: base + "\(room.name)/***", loop: false, gain: Float(gain ?? 1), transport: nil,
            streamID: streamID, publishURL: base + streamID, listen: listen)
    }
}

/// A source URL as it may be shown, and its host.
enum SourceURL {
    /// Query parameters whose values are secrets (SRT's passphrase, a stream key, a signed URL's token).
    static let secretParameters: Set<String> = ["passphrase", "password", "pass", "key", "token", "auth", "secret"]

    /// `url` with its user information replaced by `***` and secret query values by `***`.
    static func redacted(_ url: String) -> String {
        var url = url
        if let scheme = url.range(of: "://") {
            let rest = url[scheme.upperBound...]
            let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? url.endIndex
            if let at = url[scheme.upperBound..<authorityEnd].lastIndex(of: "@") {
                url.replaceSubrange(scheme.upperBound...at, with: "***@")
            }
        }
        guard let question = url.firstIndex(of: "?") else { return url }
        let query = url[url.index(after: question)...]
        let parts = query.split(separator: "&", omittingEmptySubsequences: false).map { part -> String in
            guard let equals = part.firstIndex(of: "=") else { return String(part) }
            let name = part[..<equals].lowercased()
            return secretParameters.contains(name) ? "\(part[..<equals])=***" : String(part)
        }
        return String(url[...question]) + parts.joined(separator: "&")
    }
}

/// The one directory file sources read from: `file://name.wav` (or a path below it) names a file in it; `..`, a
/// path elsewhere, or a link leading out of it is refused.
public struct MediaDirectory: Sendable, Equatable {
    /// Absolute, with symbolic links resolved.
    public let path: String
    /// libavformat's demuxers a file source may use: containers and raw streams, no playlists or scripts.
    static let formats = "mov,mp4,m4a,3gp,3g2,mj2,matroska,webm,wav,mp3,flv,mpegts,ogg,aac,flac,h264,hevc,mjpeg"

    /// Creates the directory (and its parents) when missing.
    public init(creating path: String) throws(RoomError) {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw RoomError(.internal, "media_dir", "cannot create the media directory \(path): \(error)")
        }
        guard let real = realpath(path, nil) else {
            throw RoomError(.internal, "media_dir", "cannot resolve the media directory \(path)")
        }
        defer { free(real) }
        self.path = String(cString: real)
    }

    /// The file `url` names inside this directory, or why it may not be read.
    func path(for url: String) throws(RoomError) -> String {
        guard let range = url.range(of: "://") else { throw .badRequest("invalid_source", "not a file URL") }
        let raw = String(url[range.upperBound...]).removingPercentEncoding ?? ""
        func refuse(_ why: String) -> RoomError {
            .forbidden("forbidden_path", "file sources read only from the media directory: \(why)")
        }
        guard !raw.isEmpty, !raw.contains("\0") else { throw .badRequest("invalid_source", "file URL has no name") }
        let components = raw.split(separator: "/").map(String.init)
        guard !components.contains("..") else { throw refuse("'..' in the path") }
        let file = raw.hasPrefix("/") ? raw : path + "/" + raw
        guard let real = realpath(file, nil) else { throw .notFound("no file '\(raw)' in the media directory") }
        defer { free(real) }
        let resolved = String(cString: real)
        guard resolved.hasPrefix(path + "/") else { throw refuse("the path is outside it") }
        var status = stat()
        guard stat(resolved, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw refuse("not a regular file")
        }
        return resolved
    }
}
