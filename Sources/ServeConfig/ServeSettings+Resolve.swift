import Foundation
import Logging

extension ServeSettings {
    /// Merges the three sources and applies the `serve` rules to the result.
    ///
    /// Pure: reads no file and no process state. An empty environment variable counts as unset (compose
    /// and systemd write `VAR=` for "nothing"). Throws naming the source of the first refused value: a value of the
    /// wrong type before any rule, then the rules group by group, in the order of the steps below.
    public static func resolve(
        flags: ServeFlags, env: [String: String], file: ConfigFile?
    ) throws(ServeConfigError) -> ServeSettings {
        let sources = Sources(flags: flags, env: env, file: file)
        try sources.checkFileKeys()
        let given = try Given(sources)
        let refuse = Refusal(origins: .init(uniqueKeysWithValues: SettingKey.allCases.map { ($0, sources.origin($0)) }))

        let network = try resolveNetwork(given, refuse)
        let limits = try resolveLimits(given, refuse)
        let webhooks = try resolveWebhooks(given, refuse)
        let maxTokenTTL = try resolveAccess(given, refuse)
        let storage = try resolveStorage(given, refuse)
        try checkTLS(given, refuse)
        let nodeTimeout = try resolveCluster(given, refuse)

        var settings = ServeSettings(
            http: network.http, rtpPort: network.rtpPort, publicIP: network.publicIP, keys: given.keys,
            keysFile: given.keysFile, autoCreateRooms: given.autoCreateRooms, maxTokenTTL: maxTokenTTL,
            recordingsDir: storage.recordingsDir, outputHosts: given.outputHosts ?? [],
            metricsToken: given.metricsToken, maxConnections: limits.maxConnections,
            participantTimeout: limits.participantTimeout, emptyRoomTimeout: limits.emptyRoomTimeout,
            decodeBudgetMs: limits.decodeBudgetMs, webhookURLs: webhooks, webhookSecret: given.webhookSecret,
            logLevel: limits.logLevel, origins: refuse.origins)
        settings.corsOrigins = given.corsOrigins
        settings.publicIP6 = given.publicIP6
        settings.dtlsCert = given.dtlsCert
        settings.dtlsKey = given.dtlsKey
        settings.tlsCert = given.tlsCert
        settings.tlsKey = given.tlsKey
        settings.webDir = storage.webDir
        settings.dataDir = storage.dataDir
        settings.store = storage.store
        settings.nodeID = given.nodeID
        settings.nodeURL = given.nodeURL
        settings.nodeTimeout = nodeTimeout
        let sourceLimits = try resolveSources(given, refuse)
        settings.mediaDir = sourceLimits.mediaDir
        settings.maxSources = sourceLimits.maxSources
        settings.maxSourcesPerRoom = sourceLimits.perRoom
        settings.srtPort = sourceLimits.srtPort
        settings.rtmpPort = sourceLimits.rtmpPort
        let viewers = given.maxViewers ?? Defaults.maxViewers
        guard (0...10_000).contains(viewers) else {
            throw refuse(.maxViewers, "must be within 0...10000, got \(viewers)")
        }
        settings.maxViewers = viewers
        try resolveICE(given, refuse, into: &settings)
        // The default fits under a smaller max_connections; a value given must.
        let perAddress =
            given.maxConnectionsPerAddress ?? min(Defaults.maxConnectionsPerAddress, settings.maxConnections)
        guard (0...settings.maxConnections).contains(perAddress) else {
            throw refuse(
                .maxConnectionsPerAddress,
                "must be within 0...max_connections (\(settings.maxConnections)); 0 = no cap per address, got "
                    + "\(perAddress)")
        }
        settings.maxConnectionsPerAddress = perAddress
        let quota = given.recordingsMaxBytes ?? 0
        guard quota == 0 || quota >= 1_048_576 else {
            throw refuse(.recordingsMaxBytes, "must be 0 (no quota) or at least 1048576 bytes, got \(quota)")
        }
        settings.recordingsMaxBytes = quota
        let roomQuota = given.recordingsRoomMaxBytes ?? 0
        guard roomQuota == 0 || roomQuota >= 65_536 else {
            throw refuse(
                .recordingsRoomMaxBytes, "must be 0 (no quota per room) or at least 65536 bytes, got \(roomQuota)")
        }
        settings.recordingsRoomMaxBytes = roomQuota
        settings.webhookHosts = given.webhookHosts ?? []
        settings.clusterSecret = given.clusterSecret
        settings.clusterHosts = given.clusterHosts ?? []
        return settings
    }

    /// The HTTP listener, the media port, the addresses answers carry and the web origins allowed to call.
    static func resolveNetwork(
        _ given: Given, _ refuse: Refusal
    ) throws(ServeConfigError) -> (http: HostPort, rtpPort: Int, publicIP: String) {
        let httpValue = given.http ?? Defaults.http
        guard let endpoint = HostPort(httpValue) else {
            throw refuse(.http, "must be HOST:PORT with a port in 1...65535, got '\(httpValue)'")
        }
        let port = given.rtpPort ?? Defaults.rtpPort
        guard (1...65534).contains(port) else {
            throw refuse(.rtpPort, "must be within 1...65534 (RTCP uses the port above), got \(port)")
        }
        let ip = given.publicIP ?? Defaults.publicIP
        guard isIPv4(ip) else { throw refuse(.publicIP, "must be an IPv4 address, got '\(ip)'") }
        if let publicIP6 = given.publicIP6, !isIPv6(publicIP6) {
            throw refuse(.publicIP6, "must be an IPv6 address such as 2001:db8::7, got '\(publicIP6)'")
        }
        for origin in given.corsOrigins where origin != "*" && !Self.isWebOrigin(origin) {
            throw refuse(
                .corsOrigins,
                "must hold origins such as https://example.com or http://127.0.0.1:8080 (or *), got '\(origin)'")
        }
        return (endpoint, port, ip)
    }

    /// Timeouts, the connection limit, the decode budget and the log level.
    static func resolveLimits(
        _ given: Given, _ refuse: Refusal
    ) throws(ServeConfigError) -> (
        participantTimeout: Int, emptyRoomTimeout: Int, maxConnections: Int, decodeBudgetMs: Int,
        logLevel: Logger.Level
    ) {
        let timeout = given.participantTimeout ?? Defaults.participantTimeout
        guard (1...3600).contains(timeout) else {
            throw refuse(.participantTimeout, "must be within 1...3600 s, got \(timeout)")
        }
        let levelName = given.logLevel ?? Defaults.logLevel
        guard let level = Logger.Level(rawValue: levelName) else {
            throw refuse(
                .logLevel, "must be one of trace, debug, info, notice, warning, error, critical, got '\(levelName)'")
        }
        let emptyTimeout = given.emptyRoomTimeout ?? Defaults.emptyRoomTimeout
        guard (0...86_400).contains(emptyTimeout) else {
            throw refuse(.emptyRoomTimeout, "must be within 0...86400 s (0 = never), got \(emptyTimeout)")
        }
        let connections = given.maxConnections ?? Defaults.maxConnections
        guard (16...65_536).contains(connections) else {
            throw refuse(.maxConnections, "must be within 16...65536, got \(connections)")
        }
        let budget = given.decodeBudgetMs ?? Defaults.decodeBudgetMs
        guard (10...4000).contains(budget) else {
            throw refuse(.decodeBudgetMs, "must be within 10...4000 ms of decoding a second, got \(budget)")
        }
        return (timeout, emptyTimeout, connections, budget, level)
    }

    /// The webhook receivers, and the key that signs for them (which needs at least one).
    static func resolveWebhooks(_ given: Given, _ refuse: Refusal) throws(ServeConfigError) -> [String] {
        let urls = given.webhookURLs ?? []
        for url in urls where WebhookURL.parse(url) == nil {
            throw refuse(.webhookURL, "must be an absolute http:// or https:// URL with a host, got '\(url)'")
        }
        if given.webhookSecret != nil && urls.isEmpty {
            throw refuse(
                .webhookSecret, "needs at least one webhook URL (--webhook-url, COHOST_WEBHOOK_URL or webhook_url)")
        }
        // Deliveries are signed with a secret of their own: a receiver holds it, and must not be able to mint tokens.
        if !urls.isEmpty {
            guard let secret = given.webhookSecret else {
                throw refuse(
                    .webhookSecret,
                    "must be set with webhook_url: deliveries are signed with it, never with an API key's secret "
                        + "(e.g. openssl rand -hex 32)")
            }
            if let problem = ExposurePolicy.weakWebhookSecret(secret) { throw refuse(.webhookSecret, problem) }
        }
        return urls
    }

    /// The API keys (given once), the longest token lifetime, and the token `/metrics` requires.
    static func resolveAccess(_ given: Given, _ refuse: Refusal) throws(ServeConfigError) -> Int {
        if let keys = given.keys, !keys.isEmpty, let keysFile = given.keysFile, !keysFile.isEmpty {
            throw refuse(.keysFile, "and \(refuse.origin(.keys)) are both set: give the keys once")
        }
        let ttl = given.maxTokenTTL ?? Defaults.maxTokenTTL
        guard (60...31_536_000).contains(ttl) else {
            throw refuse(.maxTokenTTL, "must be within 60...31536000 s, got \(ttl)")
        }
        if let metricsToken = given.metricsToken, metricsToken.utf8.count < 16 {
            throw refuse(.metricsToken, "must be at least 16 characters")
        }
        if let metricsToken = given.metricsToken, ExposurePolicy.publishedSecrets.contains(metricsToken) {
            throw refuse(.metricsToken, "is the example printed in Cohost's repository: generate one")
        }
        return ttl
    }

    /// Where file sources are read from, and how many sources may run.
    static func resolveSources(
        _ given: Given, _ refuse: Refusal
    ) throws(ServeConfigError) -> (mediaDir: String, maxSources: Int, perRoom: Int, srtPort: Int, rtmpPort: Int) {
        let media = given.mediaDir ?? Defaults.mediaDir
        guard !media.isEmpty, !media.contains("\0") else { throw refuse(.mediaDir, "must be a directory path") }
        let total = given.maxSources ?? Defaults.maxSources
        guard (0...1024).contains(total) else { throw refuse(.maxSources, "must be within 0...1024, got \(total)") }
        let perRoom = given.maxSourcesPerRoom ?? Defaults.maxSourcesPerRoom
        guard (0...64).contains(perRoom) else {
            throw refuse(.maxSourcesPerRoom, "must be within 0...64, got \(perRoom)")
        }
        let srt = given.srtPort ?? Defaults.srtPort
        guard (0...65535).contains(srt) else {
            throw refuse(.srtPort, "must be within 0...65535 (0: none), got \(srt)")
        }
        let mediaPort = given.rtpPort ?? Defaults.rtpPort
        if srt != 0 && (srt == mediaPort || srt == mediaPort + 1) {
            throw refuse(.srtPort, "must not be the media port or the one above it (RTCP), got \(srt)")
        }
        let rtmp = given.rtmpPort ?? Defaults.rtmpPort
        guard (0...65535).contains(rtmp) else {
            throw refuse(.rtmpPort, "must be within 0...65535 (0: none), got \(rtmp)")
        }
        let http = HostPort(given.http ?? Defaults.http)?.port
        if rtmp != 0 && rtmp == http {
            throw refuse(.rtmpPort, "must not be the HTTP port, got \(rtmp)")
        }
        return (media, total, perRoom, srt, rtmp)
    }

    /// Where the server reads and writes files: recordings, the web pages, its data and the room store.
    static func resolveStorage(
        _ given: Given, _ refuse: Refusal
    ) throws(ServeConfigError) -> (recordingsDir: String, webDir: String, dataDir: String, store: String) {
        let recordings = given.recordingsDir ?? Defaults.recordingsDir
        guard !recordings.isEmpty, !recordings.contains("\0") else {
            throw refuse(.recordingsDir, "must be a directory path")
        }
        if let webDir = given.webDir, webDir.isEmpty || webDir.contains("\0") {
            throw refuse(.webDir, "must be a directory path")
        }
        if let dataDir = given.dataDir, dataDir.isEmpty || dataDir.contains("\0") {
            throw refuse(.dataDir, "must be a directory path")
        }
        if let store = given.store {
            let path = store.hasPrefix("sqlite:") ? String(store.dropFirst("sqlite:".count)) : nil
            guard
                store == "sqlite" || store == "none" || (path.map { !$0.isEmpty && !$0.contains("\0") } ?? false)
                    || (Self.isPostgres(store) && !store.contains("\0"))
            else {
                throw refuse(.store, "must be sqlite, sqlite:PATH, postgres://… or none, got '\(store.prefix(80))'")
            }
        }
        return (
            recordings, given.webDir ?? Defaults.webDir, given.dataDir ?? Defaults.dataDir,
            given.store ?? Defaults.store
        )
    }

    /// Certificates come with their keys: the API's (HTTPS) and WebRTC's (DTLS).
    static func checkTLS(_ given: Given, _ refuse: Refusal) throws(ServeConfigError) {
        if (given.tlsCert == nil) != (given.tlsKey == nil) {
            throw refuse(given.tlsCert == nil ? .tlsKey : .tlsCert, "needs its pair: give both tls_cert and tls_key")
        }
        if (given.dtlsCert == nil) != (given.dtlsKey == nil) {
            throw refuse(
                given.dtlsCert == nil ? .dtlsKey : .dtlsCert, "needs its pair: give both dtls_cert and dtls_key")
        }
    }

    /// This node's id, URL and heartbeat timeout in a cluster.
    static func resolveCluster(_ given: Given, _ refuse: Refusal) throws(ServeConfigError) -> Int {
        if let nodeID = given.nodeID, !Self.isNodeID(nodeID) {
            throw refuse(.nodeID, "must be 1…64 of [A-Za-z0-9_.-], got '\(nodeID.prefix(80))'")
        }
        if let nodeURL = given.nodeURL, !Self.isNodeURL(nodeURL) {
            throw refuse(.nodeURL, "must be http(s)://host[:port] with nothing after it, got '\(nodeURL.prefix(80))'")
        }
        if let nodeTimeout = given.nodeTimeout, !(3...600).contains(nodeTimeout) {
            throw refuse(.nodeTimeout, "must be within 3...600 s, got \(nodeTimeout)")
        }
        // The nodes trust a forwarded call only when it is signed: a cluster has a secret of its own.
        let clustered = given.store.map(Self.isPostgres) ?? false
        if let secret = given.clusterSecret {
            if let problem = ExposurePolicy.weakWebhookSecret(secret) { throw refuse(.clusterSecret, problem) }
        } else if clustered {
            throw refuse(
                .store,
                "makes this server a cluster node, which needs cluster_secret (the same on every node, at least 32 "
                    + "bytes: openssl rand -hex 32)")
        }
        return given.nodeTimeout ?? Defaults.nodeTimeout
    }
}

/// Each setting's value from the first source that has one, before any rule; nil (or empty) where none has.
struct Given {
    var http, publicIP, keys, keysFile, recordingsDir, metricsToken, webhookSecret, logLevel: String?
    var dtlsCert, dtlsKey, publicIP6, webDir, tlsCert, tlsKey, dataDir, store, nodeID, nodeURL: String?
    var rtpPort, maxTokenTTL, maxConnections, participantTimeout, emptyRoomTimeout, decodeBudgetMs: Int?
    var nodeTimeout, maxSources, maxSourcesPerRoom, srtPort, rtmpPort, maxViewers, iceTCPPort: Int?
    var maxConnectionsPerAddress, recordingsMaxBytes, recordingsRoomMaxBytes: Int?
    var mediaDir, turnSecret, stunURL: String?
    var turnURLs: [String]
    var autoCreateRooms: Bool?
    var outputHosts, webhookURLs, webhookHosts, clusterHosts: [String]?
    var clusterSecret: String?
    var corsOrigins: [String]

    /// Reads every setting in one fixed order, so a value of the wrong type is reported before any rule.
    fileprivate init(_ sources: Sources) throws(ServeConfigError) {
        let flags = sources.flags
        http = try sources.string(.http, flags.http)
        rtpPort = try sources.integer(.rtpPort, flags.rtpPort)
        publicIP = try sources.string(.publicIP, flags.publicIP)
        keys = try sources.string(.keys, flags.keys)
        keysFile = try sources.string(.keysFile, flags.keysFile)
        autoCreateRooms = try sources.boolean(.autoCreateRooms, flags.autoCreateRooms)
        maxTokenTTL = try sources.integer(.maxTokenTTL, flags.maxTokenTTL)
        recordingsDir = try sources.string(.recordingsDir, flags.recordingsDir)
        outputHosts = try sources.list(.outputHosts, flags.outputHosts)
        metricsToken = try sources.string(.metricsToken, flags.metricsToken)
        maxConnections = try sources.integer(.maxConnections, flags.maxConnections)
        participantTimeout = try sources.integer(.participantTimeout, flags.participantTimeout)
        emptyRoomTimeout = try sources.integer(.emptyRoomTimeout, flags.emptyRoomTimeout)
        decodeBudgetMs = try sources.integer(.decodeBudgetMs, flags.decodeBudgetMs)
        webhookURLs = try sources.list(.webhookURL, flags.webhookURLs)
        webhookHosts = try sources.list(.webhookHosts, flags.webhookHosts)
        clusterHosts = try sources.list(.clusterHosts, flags.clusterHosts)
        clusterSecret = try sources.string(.clusterSecret, flags.clusterSecret)
        webhookSecret = try sources.string(.webhookSecret, flags.webhookSecret)
        logLevel = try sources.string(.logLevel, flags.logLevel)
        corsOrigins = try sources.list(.corsOrigins, flags.corsOrigins) ?? []
        dtlsCert = try sources.string(.dtlsCert, flags.dtlsCert)
        dtlsKey = try sources.string(.dtlsKey, flags.dtlsKey)
        publicIP6 = try sources.string(.publicIP6, flags.publicIP6)
        webDir = try sources.string(.webDir, flags.webDir)
        tlsCert = try sources.string(.tlsCert, flags.tlsCert)
        tlsKey = try sources.string(.tlsKey, flags.tlsKey)
        dataDir = try sources.string(.dataDir, flags.dataDir)
        store = try sources.string(.store, flags.store)
        nodeID = try sources.string(.nodeID, flags.nodeID)
        nodeURL = try sources.string(.nodeURL, flags.nodeURL)
        nodeTimeout = try sources.integer(.nodeTimeout, flags.nodeTimeout)
        mediaDir = try sources.string(.mediaDir, flags.mediaDir)
        maxSources = try sources.integer(.maxSources, flags.maxSources)
        maxSourcesPerRoom = try sources.integer(.maxSourcesPerRoom, flags.maxSourcesPerRoom)
        srtPort = try sources.integer(.srtPort, flags.srtPort)
        rtmpPort = try sources.integer(.rtmpPort, flags.rtmpPort)
        maxViewers = try sources.integer(.maxViewers, flags.maxViewers)
        iceTCPPort = try sources.integer(.iceTCPPort, flags.iceTCPPort)
        turnURLs = try sources.list(.turnURLs, flags.turnURLs) ?? []
        turnSecret = try sources.string(.turnSecret, flags.turnSecret)
        stunURL = try sources.string(.stunURL, flags.stunURL)
        maxConnectionsPerAddress = try sources.integer(.maxConnectionsPerAddress, flags.maxConnectionsPerAddress)
        recordingsMaxBytes = try sources.integer(.recordingsMaxBytes, flags.recordingsMaxBytes)
        recordingsRoomMaxBytes = try sources.integer(.recordingsRoomMaxBytes, flags.recordingsRoomMaxBytes)
    }
}

/// A refused value's error, naming the source it came from.
struct Refusal {
    var origins: [SettingKey: SettingOrigin]

    func origin(_ key: SettingKey) -> SettingOrigin { origins[key] ?? .builtInDefault(key) }

    func callAsFunction(_ key: SettingKey, _ rule: String) -> ServeConfigError {
        ServeConfigError("\(origin(key)) \(rule)")
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
        case .webhookHosts: !flags.webhookHosts.isEmpty
        case .clusterHosts: !flags.clusterHosts.isEmpty
        case .clusterSecret: flags.clusterSecret != nil
        case .webhookSecret: flags.webhookSecret != nil
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
        case .mediaDir: flags.mediaDir != nil
        case .maxSources: flags.maxSources != nil
        case .maxSourcesPerRoom: flags.maxSourcesPerRoom != nil
        case .srtPort: flags.srtPort != nil
        case .rtmpPort: flags.rtmpPort != nil
        case .maxViewers: flags.maxViewers != nil
        case .iceTCPPort: flags.iceTCPPort != nil
        case .turnURLs: !flags.turnURLs.isEmpty
        case .turnSecret: flags.turnSecret != nil
        case .stunURL: flags.stunURL != nil
        case .maxConnectionsPerAddress: flags.maxConnectionsPerAddress != nil
        case .recordingsMaxBytes: flags.recordingsMaxBytes != nil
        case .recordingsRoomMaxBytes: flags.recordingsRoomMaxBytes != nil
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
        if key == "webhook_key" {
            throw ServeConfigError(
                "'webhook_key' in config file \(file.path)\(place) is not read any more: webhooks are signed with "
                    + "webhook_secret, a secret of their own, never an API key's")
        }
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
