import Foundation
import Logging

/// The values of `cohost serve` given on its command line; nil (or an empty list) = not given.
public struct ServeFlags: Sendable, Equatable {
    public var http: String?
    public var rtpPort: Int?
    public var publicIP: String?
    public var keys: String?
    public var keysFile: String?
    public var autoCreateRooms: Bool?
    public var maxTokenTTL: Int?
    public var recordingsDir: String?
    public var outputHosts: [String]
    public var metricsToken: String?
    public var maxConnections: Int?
    public var participantTimeout: Int?
    public var emptyRoomTimeout: Int?
    public var decodeBudgetMs: Int?
    public var webhookURLs: [String]
    public var webhookKey: String?
    public var logLevel: String?
    public var corsOrigins: [String]
    public var dtlsCert: String?
    public var dtlsKey: String?
    public var publicIP6: String?
    public var webDir: String?
    public var tlsCert: String?
    public var tlsKey: String?
    public var dataDir: String?
    public var store: String?
    public var nodeID: String?
    public var nodeURL: String?
    public var nodeTimeout: Int?

    public init(
        http: String? = nil, rtpPort: Int? = nil, publicIP: String? = nil, keys: String? = nil,
        keysFile: String? = nil, autoCreateRooms: Bool? = nil, maxTokenTTL: Int? = nil, recordingsDir: String? = nil,
        outputHosts: [String] = [], metricsToken: String? = nil, maxConnections: Int? = nil,
        participantTimeout: Int? = nil, emptyRoomTimeout: Int? = nil, decodeBudgetMs: Int? = nil,
        webhookURLs: [String] = [],
        webhookKey: String? = nil, logLevel: String? = nil, corsOrigins: [String] = [], dtlsCert: String? = nil,
        dtlsKey: String? = nil, publicIP6: String? = nil, webDir: String? = nil, tlsCert: String? = nil,
        tlsKey: String? = nil, dataDir: String? = nil, store: String? = nil, nodeID: String? = nil,
        nodeURL: String? = nil, nodeTimeout: Int? = nil
    ) {
        self.nodeID = nodeID
        self.nodeURL = nodeURL
        self.nodeTimeout = nodeTimeout
        self.dataDir = dataDir
        self.store = store
        self.webDir = webDir
        self.tlsCert = tlsCert
        self.tlsKey = tlsKey
        self.publicIP6 = publicIP6
        self.corsOrigins = corsOrigins
        self.dtlsCert = dtlsCert
        self.dtlsKey = dtlsKey
        self.http = http
        self.rtpPort = rtpPort
        self.publicIP = publicIP
        self.keys = keys
        self.keysFile = keysFile
        self.autoCreateRooms = autoCreateRooms
        self.maxTokenTTL = maxTokenTTL
        self.recordingsDir = recordingsDir
        self.outputHosts = outputHosts
        self.metricsToken = metricsToken
        self.maxConnections = maxConnections
        self.participantTimeout = participantTimeout
        self.emptyRoomTimeout = emptyRoomTimeout
        self.decodeBudgetMs = decodeBudgetMs
        self.webhookURLs = webhookURLs
        self.webhookKey = webhookKey
        self.logLevel = logLevel
    }
}

/// The merged, validated settings of `cohost serve`, each with the place its value came from.
///
/// Precedence, per setting: command-line flag > environment variable > config file > built-in default.
/// A list (`webhook_url`) is taken whole from the first source that has it; lists never merge.
public struct ServeSettings: Sendable, Equatable {
    /// HTTP API listener.
    public var http: HostPort
    /// UDP media port; RTCP also on the port above.
    public var rtpPort: Int
    /// IPv4 address written into SDP answers.
    public var publicIP: String
    /// `KEY:SECRET[,KEY2:SECRET2]`, or nil for dev mode. Checked by `APIKeys.parse` in the executable.
    public var keys: String?
    /// A file holding the keys (one `KEY:SECRET` a line), so they are not on the command line.
    public var keysFile: String?
    /// Whether a participant token's join creates a missing room; nil: only in dev mode.
    public var autoCreateRooms: Bool?
    /// The longest token lifetime accepted (s), and how long a kick outlives its room.
    public var maxTokenTTL: Int
    /// Where `file://` outputs may write.
    public var recordingsDir: String
    /// Hosts and CIDRs outputs may push to; empty: any host but link-local and metadata addresses.
    public var outputHosts: [String]
    /// A bearer token `/metrics` requires; nil: open.
    public var metricsToken: String?
    /// Concurrent HTTP connections, event WebSockets included.
    public var maxConnections: Int
    /// Seconds without packets before a participant times out.
    public var participantTimeout: Int
    /// Seconds an empty room lives; 0 = forever.
    public var emptyRoomTimeout: Int
    /// Decoder CPU time (ms) each participant's video may use a second before it is held to keyframes.
    public var decodeBudgetMs: Int
    /// Webhook receivers, in the order given.
    public var webhookURLs: [String]
    /// The API key whose secret signs webhooks; nil = the first of `keys`.
    public var webhookKey: String?
    /// The log level.
    public var logLevel: Logger.Level
    /// Web origins (`https://host[:port]`, or `*`) whose pages may call the API from a browser (CORS).
    public var corsOrigins: [String] = []
    /// PEM files of the DTLS certificate and key WebRTC answers use; nil: a fresh ECDSA P-256 one per start.
    public var dtlsCert: String?
    public var dtlsKey: String?
    /// An IPv6 address WebRTC answers offer as a second host candidate; the media port then listens on both families.
    public var publicIP6: String?
    /// The console's and join page's files (`web/`); served at `/` when it holds them.
    public var webDir = Defaults.webDir
    /// PEM certificate chain and key: the API, events and pages over HTTPS (reloaded on SIGHUP).
    public var tlsCert: String?
    public var tlsKey: String?
    /// Where the server keeps its files (the embedded store's database).
    public var dataDir = Defaults.dataDir
    /// The room store: `sqlite` (`<data_dir>/cohost.db`), `sqlite:PATH`, `postgres://…` (a cluster), or `none`.
    public var store = Defaults.store
    /// This node's id in a cluster (default: the host name).
    public var nodeID: String?
    /// The API's URL as the other nodes reach it (default: http://<http host:port>).
    public var nodeURL: String?
    /// Seconds without a heartbeat after which a node's rooms go to the others.
    public var nodeTimeout = Defaults.nodeTimeout
    /// Where each setting's value came from.
    public var origins: [SettingKey: SettingOrigin]

    /// Built-in defaults: what `cohost serve` with no flags, no environment and no file uses (dev mode).
    public enum Defaults {
        public static let http = "127.0.0.1:7880"
        public static let rtpPort = 7882
        public static let publicIP = "127.0.0.1"
        public static let participantTimeout = 10
        public static let emptyRoomTimeout = 300
        public static let logLevel = "info"
        public static let maxTokenTTL = 86_400
        public static let recordingsDir = "./recordings"
        public static let decodeBudgetMs = 500
        public static let maxConnections = 1024
        public static let webDir = "./web"
        public static let dataDir = "./data"
        public static let store = "sqlite"
        public static let nodeTimeout = 10
    }

    /// The store `store` names: nil for `none`.
    public var storeLocation: StoreLocation? {
        if store == "none" { return nil }
        if store.hasPrefix("sqlite:") { return .sqlite(path: String(store.dropFirst("sqlite:".count))) }
        if Self.isPostgres(store) { return .postgres(url: store) }
        return .sqlite(path: dataDir + "/cohost.db")
    }

    public enum StoreLocation: Sendable, Equatable {
        case sqlite(path: String)
        case postgres(url: String)
    }

    static func isPostgres(_ store: String) -> Bool {
        store.lowercased().hasPrefix("postgres://") || store.lowercased().hasPrefix("postgresql://")
    }

    static func isNodeID(_ id: String) -> Bool {
        (1...64).contains(id.utf8.count)
            && id.utf8.allSatisfy {
                ($0 >= 48 && $0 <= 57) || ($0 | 0x20 >= 97 && $0 | 0x20 <= 122) || "_.-".utf8.contains($0)
            }
    }

    static func isNodeURL(_ url: String) -> Bool {
        guard let c = URLComponents(string: url), let scheme = c.scheme, scheme == "http" || scheme == "https",
            c.host?.isEmpty == false, c.path.isEmpty || c.path == "/", c.query == nil, c.fragment == nil, c.user == nil
        else { return false }
        return true
    }

    /// Where `key`'s value came from.
    public func origin(of key: SettingKey) -> SettingOrigin { origins[key] ?? .builtInDefault(key) }

    /// The config file to read: `--config`, else `COHOST_CONFIG`, else none.
    public static func configPath(flag: String?, env: [String: String]) -> String? {
        if let flag, !flag.isEmpty { return flag }
        if let value = env[SettingKey.configEnvVar], !value.isEmpty { return value }
        return nil
    }

    /// Merges the three sources and applies the `serve` rules to the result.
    ///
    /// Pure: reads no file and no process state. An empty environment variable counts as unset (compose
    /// and systemd write `VAR=` for "nothing"). Throws naming the source of the first refused value.
    public static func resolve(
        flags: ServeFlags, env: [String: String], file: ConfigFile?
    ) throws(ServeConfigError) -> ServeSettings {
        let sources = Sources(flags: flags, env: env, file: file)
        try sources.checkFileKeys()

        let http = try sources.string(.http, flags.http)
        let rtpPort = try sources.integer(.rtpPort, flags.rtpPort)
        let publicIP = try sources.string(.publicIP, flags.publicIP)
        let keys = try sources.string(.keys, flags.keys)
        let keysFile = try sources.string(.keysFile, flags.keysFile)
        let autoCreate = try sources.boolean(.autoCreateRooms, flags.autoCreateRooms)
        let maxTTL = try sources.integer(.maxTokenTTL, flags.maxTokenTTL)
        let recordingsDir = try sources.string(.recordingsDir, flags.recordingsDir)
        let outputHosts = try sources.list(.outputHosts, flags.outputHosts)
        let metricsToken = try sources.string(.metricsToken, flags.metricsToken)
        let maxConnections = try sources.integer(.maxConnections, flags.maxConnections)
        let participantTimeout = try sources.integer(.participantTimeout, flags.participantTimeout)
        let emptyRoomTimeout = try sources.integer(.emptyRoomTimeout, flags.emptyRoomTimeout)
        let decodeBudget = try sources.integer(.decodeBudgetMs, flags.decodeBudgetMs)
        let webhookURLs = try sources.list(.webhookURL, flags.webhookURLs)
        let webhookKey = try sources.string(.webhookKey, flags.webhookKey)
        let logLevel = try sources.string(.logLevel, flags.logLevel)
        let corsOrigins = try sources.list(.corsOrigins, flags.corsOrigins) ?? []
        let dtlsCert = try sources.string(.dtlsCert, flags.dtlsCert)
        let dtlsKey = try sources.string(.dtlsKey, flags.dtlsKey)
        let publicIP6 = try sources.string(.publicIP6, flags.publicIP6)
        let webDir = try sources.string(.webDir, flags.webDir)
        let tlsCert = try sources.string(.tlsCert, flags.tlsCert)
        let tlsKey = try sources.string(.tlsKey, flags.tlsKey)
        let dataDir = try sources.string(.dataDir, flags.dataDir)
        let store = try sources.string(.store, flags.store)
        let nodeID = try sources.string(.nodeID, flags.nodeID)
        let nodeURL = try sources.string(.nodeURL, flags.nodeURL)
        let nodeTimeout = try sources.integer(.nodeTimeout, flags.nodeTimeout)

        var origins: [SettingKey: SettingOrigin] = [:]
        for key in SettingKey.allCases { origins[key] = sources.origin(key) }
        func refuse(_ key: SettingKey, _ rule: String) -> ServeConfigError {
            ServeConfigError("\(origins[key] ?? .builtInDefault(key)) \(rule)")
        }

        // The rules `serve` always had, now applied whatever the source.
        let httpValue = http ?? Defaults.http
        guard let endpoint = HostPort(httpValue) else {
            throw refuse(.http, "must be HOST:PORT with a port in 1...65535, got '\(httpValue)'")
        }
        let port = rtpPort ?? Defaults.rtpPort
        guard (1...65534).contains(port) else {
            throw refuse(.rtpPort, "must be within 1...65534 (RTCP uses the port above), got \(port)")
        }
        let ip = publicIP ?? Defaults.publicIP
        guard isIPv4(ip) else { throw refuse(.publicIP, "must be an IPv4 address, got '\(ip)'") }
        let timeout = participantTimeout ?? Defaults.participantTimeout
        guard (1...3600).contains(timeout) else {
            throw refuse(.participantTimeout, "must be within 1...3600 s, got \(timeout)")
        }
        let levelName = logLevel ?? Defaults.logLevel
        guard let level = Logger.Level(rawValue: levelName) else {
            throw refuse(
                .logLevel, "must be one of trace, debug, info, notice, warning, error, critical, got '\(levelName)'")
        }
        let emptyTimeout = emptyRoomTimeout ?? Defaults.emptyRoomTimeout
        guard (0...86_400).contains(emptyTimeout) else {
            throw refuse(.emptyRoomTimeout, "must be within 0...86400 s (0 = never), got \(emptyTimeout)")
        }
        let connections = maxConnections ?? Defaults.maxConnections
        guard (16...65_536).contains(connections) else {
            throw refuse(.maxConnections, "must be within 16...65536, got \(connections)")
        }
        let budget = decodeBudget ?? Defaults.decodeBudgetMs
        guard (10...4000).contains(budget) else {
            throw refuse(.decodeBudgetMs, "must be within 10...4000 ms of decoding a second, got \(budget)")
        }
        let urls = webhookURLs ?? []
        for url in urls where WebhookURL.parse(url) == nil {
            throw refuse(.webhookURL, "must be an absolute http:// or https:// URL with a host, got '\(url)'")
        }
        if let keys, !keys.isEmpty, let keysFile, !keysFile.isEmpty {
            throw refuse(.keysFile, "and \(origins[.keys] ?? .builtInDefault(.keys)) are both set: give the keys once")
        }
        let ttl = maxTTL ?? Defaults.maxTokenTTL
        guard (60...31_536_000).contains(ttl) else {
            throw refuse(.maxTokenTTL, "must be within 60...31536000 s, got \(ttl)")
        }
        let recordings = recordingsDir ?? Defaults.recordingsDir
        guard !recordings.isEmpty, !recordings.contains("\0") else {
            throw refuse(.recordingsDir, "must be a directory path")
        }
        if let metricsToken, metricsToken.utf8.count < 16 {
            throw refuse(.metricsToken, "must be at least 16 characters")
        }
        if let metricsToken, ExposurePolicy.publishedSecrets.contains(metricsToken) {
            throw refuse(.metricsToken, "is the example printed in Cohost's repository: generate one")
        }
        if webhookKey != nil && urls.isEmpty {
            throw refuse(
                .webhookKey, "needs at least one webhook URL (--webhook-url, COHOST_WEBHOOK_URL or webhook_url)")
        }
        for origin in corsOrigins where origin != "*" && !Self.isWebOrigin(origin) {
            throw refuse(
                .corsOrigins,
                "must hold origins such as https://example.com or http://127.0.0.1:8080 (or *), got '\(origin)'")
        }
        if let publicIP6, !isIPv6(publicIP6) {
            throw refuse(.publicIP6, "must be an IPv6 address such as 2001:db8::7, got '\(publicIP6)'")
        }
        if (tlsCert == nil) != (tlsKey == nil) {
            throw refuse(tlsCert == nil ? .tlsKey : .tlsCert, "needs its pair: give both tls_cert and tls_key")
        }
        if let webDir, webDir.isEmpty || webDir.contains("\0") { throw refuse(.webDir, "must be a directory path") }
        if let dataDir, dataDir.isEmpty || dataDir.contains("\0") { throw refuse(.dataDir, "must be a directory path") }
        if let store {
            let path = store.hasPrefix("sqlite:") ? String(store.dropFirst("sqlite:".count)) : nil
            guard
                store == "sqlite" || store == "none" || (path.map { !$0.isEmpty && !$0.contains("\0") } ?? false)
                    || (Self.isPostgres(store) && !store.contains("\0"))
            else {
                throw refuse(.store, "must be sqlite, sqlite:PATH, postgres://… or none, got '\(store.prefix(80))'")
            }
        }
        if let nodeID, !Self.isNodeID(nodeID) {
            throw refuse(.nodeID, "must be 1…64 of [A-Za-z0-9_.-], got '\(nodeID.prefix(80))'")
        }
        if let nodeURL, !Self.isNodeURL(nodeURL) {
            throw refuse(.nodeURL, "must be http(s)://host[:port] with nothing after it, got '\(nodeURL.prefix(80))'")
        }
        if let nodeTimeout, !(3...600).contains(nodeTimeout) {
            throw refuse(.nodeTimeout, "must be within 3...600 s, got \(nodeTimeout)")
        }
        if (dtlsCert == nil) != (dtlsKey == nil) {
            throw refuse(dtlsCert == nil ? .dtlsKey : .dtlsCert, "needs its pair: give both dtls_cert and dtls_key")
        }
        var settings = ServeSettings(
            http: endpoint, rtpPort: port, publicIP: ip, keys: keys, keysFile: keysFile, autoCreateRooms: autoCreate,
            maxTokenTTL: ttl, recordingsDir: recordings, outputHosts: outputHosts ?? [], metricsToken: metricsToken,
            maxConnections: connections, participantTimeout: timeout,
            emptyRoomTimeout: emptyTimeout, decodeBudgetMs: budget, webhookURLs: urls, webhookKey: webhookKey,
            logLevel: level, origins: origins)
        settings.corsOrigins = corsOrigins
        settings.dtlsCert = dtlsCert
        settings.dtlsKey = dtlsKey
        settings.publicIP6 = publicIP6
        settings.webDir = webDir ?? Defaults.webDir
        settings.tlsCert = tlsCert
        settings.tlsKey = tlsKey
        settings.dataDir = dataDir ?? Defaults.dataDir
        settings.store = store ?? Defaults.store
        settings.nodeID = nodeID
        settings.nodeURL = nodeURL
        settings.nodeTimeout = nodeTimeout ?? Defaults.nodeTimeout
        return settings
    }

    /// `scheme://host[:port]` with nothing after it (RFC 6454), as a browser sends it in `Origin`.
    static func isWebOrigin(_ text: String) -> Bool {
        guard let range = text.range(of: "://") else { return false }
        let scheme = text[..<range.lowerBound]
        let rest = text[range.upperBound...]
        return (scheme == "http" || scheme == "https") && !rest.isEmpty && !rest.contains("/")
            && !rest.contains("?") && !rest.contains("#") && !rest.contains(" ")
    }
}

/// The three sources side by side, taking each setting from the first that has it.
private struct Sources {
    let flags: ServeFlags
    let env: [String: String]
    let file: ConfigFile?

    /// The source `key`'s value is taken from: the first that has one.
    func origin(_ key: SettingKey) -> SettingOrigin {
        if flagGiven(key) { return .flag(key) }
        if envValue(key) != nil { return .environment(key) }
        if let file, let entry = file.entries[key.fileKey] { return .file(key, path: file.path, line: entry.line) }
        return .builtInDefault(key)
    }

    private func flagGiven(_ key: SettingKey) -> Bool {
        switch key {
        case .http: flags.http != nil
        case .rtpPort: flags.rtpPort != nil
        case .publicIP: flags.publicIP != nil
        case .keys: flags.keys != nil
        case .keysFile: flags.keysFile != nil
        case .autoCreateRooms: flags.autoCreateRooms != nil
        case .maxTokenTTL: flags.maxTokenTTL != nil
        case .recordingsDir: flags.recordingsDir != nil
        case .outputHosts: !flags.outputHosts.isEmpty
        case .metricsToken: flags.metricsToken != nil
        case .maxConnections: flags.maxConnections != nil
        case .participantTimeout: flags.participantTimeout != nil
        case .emptyRoomTimeout: flags.emptyRoomTimeout != nil
        case .decodeBudgetMs: flags.decodeBudgetMs != nil
        case .webhookURL: !flags.webhookURLs.isEmpty
        case .webhookKey: flags.webhookKey != nil
        case .logLevel: flags.logLevel != nil
        case .corsOrigins: !flags.corsOrigins.isEmpty
        case .dtlsCert: flags.dtlsCert != nil
        case .dtlsKey: flags.dtlsKey != nil
        case .publicIP6: flags.publicIP6 != nil
        case .webDir: flags.webDir != nil
        case .tlsCert: flags.tlsCert != nil
        case .tlsKey: flags.tlsKey != nil
        case .dataDir: flags.dataDir != nil
        case .store: flags.store != nil
        case .nodeID: flags.nodeID != nil
        case .nodeURL: flags.nodeURL != nil
        case .nodeTimeout: flags.nodeTimeout != nil
        }
    }

    private func envValue(_ key: SettingKey) -> String? {
        guard let value = env[key.envVar], !value.isEmpty else { return nil }
        return value
    }

    /// Unknown keys are refused, first by line, so a typo never silently falls back to a default.
    func checkFileKeys() throws(ServeConfigError) {
        guard let file else { return }
        let unknown = file.entries.filter { SettingKey(fileKey: $0.key) == nil }
            .sorted { ($0.value.line ?? .max, $0.key) < ($1.value.line ?? .max, $1.key) }
        guard let (key, entry) = unknown.first else { return }
        let place = entry.line.map { " (line \($0))" } ?? ""
        let known = SettingKey.allCases.map(\.fileKey).joined(separator: ", ")
        throw ServeConfigError("unknown key '\(key)' in config file \(file.path)\(place); known keys: \(known)")
    }

    private func typeError(_ key: SettingKey, _ entry: ConfigFile.Entry) -> ServeConfigError {
        ServeConfigError("\(origin(key)) must be \(key.kind.description), found \(entry.value.typeName)")
    }

    func string(_ key: SettingKey, _ flag: String?) throws(ServeConfigError) -> String? {
        if let flag { return flag }
        if let value = envValue(key) { return value }
        guard let entry = file?.entries[key.fileKey] else { return nil }
        guard case .string(let value) = entry.value else { throw typeError(key, entry) }
        return value
    }

    func integer(_ key: SettingKey, _ flag: Int?) throws(ServeConfigError) -> Int? {
        if let flag { return flag }
        if let text = envValue(key) {
            guard let value = Int(text.trimmingWhitespace) else {
                throw ServeConfigError("\(origin(key)) must be an integer, got '\(text)'")
            }
            return value
        }
        guard let entry = file?.entries[key.fileKey] else { return nil }
        guard case .integer(let value) = entry.value else { throw typeError(key, entry) }
        return value
    }

    /// Booleans: true/false (also 1/0, yes/no, on/off) in the environment, a TOML boolean in the file.
    func boolean(_ key: SettingKey, _ flag: Bool?) throws(ServeConfigError) -> Bool? {
        if let flag { return flag }
        if let text = envValue(key) {
            switch text.trimmingWhitespace.lowercased() {
            case "true", "1", "yes", "on": return true
            case "false", "0", "no", "off": return false
            default: throw ServeConfigError("\(origin(key)) must be true or false, got '\(text)'")
            }
        }
        guard let entry = file?.entries[key.fileKey] else { return nil }
        guard case .boolean(let value) = entry.value else { throw typeError(key, entry) }
        return value
    }

    /// Lists: the environment variable is comma separated (blanks around items ignored).
    func list(_ key: SettingKey, _ flag: [String]) throws(ServeConfigError) -> [String]? {
        if !flag.isEmpty { return flag }
        if let text = envValue(key) {
            return text.split(separator: ",").map { String($0).trimmingWhitespace }.filter { !$0.isEmpty }
        }
        guard let entry = file?.entries[key.fileKey] else { return nil }
        guard case .array(let items) = entry.value else { throw typeError(key, entry) }
        var strings: [String] = []
        for item in items {
            guard case .string(let value) = item else {
                throw ServeConfigError(
                    "\(origin(key)) must be an array of strings, found an item of type \(item.typeName)")
            }
            strings.append(value)
        }
        return strings
    }
}

extension String {
    fileprivate var trimmingWhitespace: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
