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
