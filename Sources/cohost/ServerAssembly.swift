import Cluster
import DTLS
import Foundation
import ICE
import Logging
import Publishing
import Rooms
import ServeConfig
import Server
import Store

/// `cohost serve`'s settings turned into the server's configuration, one concern a step: the HTTP listener, the
/// API keys (or dev mode), the rooms' rules, WebRTC's identity, the store (and on PostgreSQL the cluster node), the
/// webhooks. A refused value stops the start with the setting's origin named.
struct ServerAssembly {
    let settings: ServeSettings
    let logger: Logger

    func configuration() throws -> ServerConfiguration {
        var config = ServerConfiguration()
        try listener(into: &config)
        let devMode = try keys(into: &config)
        // After the keys: dev mode on such a listener is the first thing to say.
        if let refusal = ExposurePolicy.openMetricsRefusal(http: settings.http, metricsToken: settings.metricsToken) {
            throw ServeConfigError("\(settings.origin(of: .http)): \(refusal)")
        }
        if let warning = ExposurePolicy.plainHTTPWarning(http: settings.http, tls: config.tls != nil) {
            logger.warning("\(warning)")
        }
        try rooms(into: &config, devMode: devMode)
        try webRTC(into: &config)
        try store(into: &config)
        try webhooks(into: &config, devMode: devMode)
        return config
    }

    private func listener(into config: inout ServerConfiguration) throws {
        config.httpHost = settings.http.host
        config.httpPort = settings.http.port
        config.metricsToken = settings.metricsToken
        config.corsOrigins = settings.corsOrigins
        config.webDirectory = settings.webDir
        if let cert = settings.tlsCert, let key = settings.tlsKey {
            do { config.tls = try TLSIdentity(certificatePath: cert, keyPath: key) } catch {
                throw ServeConfigError("\(error)")
            }
        }
        config.maxConnections = settings.maxConnections
        config.maxConnectionsPerAddress = settings.maxConnectionsPerAddress
    }

    /// The API keys, each secret strong enough; none is dev mode, on a loopback listener only. Returns whether this
    /// is dev mode.
    private func keys(into config: inout ServerConfiguration) throws -> Bool {
        let (spec, keysOrigin) = try Self.keysSpec(settings)
        guard let spec else {
            if let refusal = ExposurePolicy.devModeRefusal(http: settings.http) {
                throw ServeConfigError("\(settings.origin(of: .http)): \(refusal)")
            }
            config.keys = .dev
            logger.warning(
                """
                *** DEV MODE: no API keys (--keys, COHOST_KEYS, --keys-file or keys/keys_file in the config file); accepting tokens signed with \
                key 'devkey', secret 'devsecret'. Anyone can mint admin tokens. Never expose this server. ***
                """)
            return true
        }
        do { config.keys = try APIKeys.parse(spec) } catch {
            throw ServeConfigError("\(keysOrigin): \(error)")
        }
        for key in config.keys.keys {
            if let problem = ExposurePolicy.weakSecret(key: key, secret: config.keys.secret(for: key) ?? "") {
                throw ServeConfigError("\(keysOrigin): \(problem)")
            }
        }
        return false
    }

    /// The allow-list setting `key` read as a destination policy; an entry that is neither a host nor a network
    /// stops the start, naming where it came from.
    private func policy(_ key: SettingKey, _ items: [String], devMode: Bool) throws -> DestinationPolicy {
        do { return try DestinationPolicy(allowing: items, setting: key.rawValue, allowsLoopback: devMode) } catch {
            throw ServeConfigError("\(settings.origin(of: key)): \(error)")
        }
    }

    private func rooms(into config: inout ServerConfiguration, devMode: Bool) throws {
        let destinations = try policy(.outputHosts, settings.outputHosts, devMode: devMode)
        var recordings: RecordingsDirectory
        do { recordings = try RecordingsDirectory(creating: settings.recordingsDir) } catch {
            throw ServeConfigError("\(settings.origin(of: .recordingsDir)): \(error)")
        }
        if settings.recordingsMaxBytes > 0 {
            recordings.quota = RecordingQuota(
                limitBytes: Int64(settings.recordingsMaxBytes), directory: recordings.path)
        }
        config.rooms = RoomSettings(
            publicIP: settings.publicIP, rtpPort: settings.rtpPort,
            participantTimeoutMs: Int64(settings.participantTimeout) * 1000,
            emptyRoomTimeoutMs: Int64(settings.emptyRoomTimeout) * 1000,
            autoCreateRooms: settings.autoCreateRooms ?? devMode,
            maxTokenTTLSeconds: Int64(settings.maxTokenTTL),
            outputRules: OutputRules(recordings: recordings, destinations: destinations),
            decodeBudgetMs: Int64(settings.decodeBudgetMs))
        let media: MediaDirectory
        do { media = try MediaDirectory(creating: settings.mediaDir) } catch {
            throw ServeConfigError("\(settings.origin(of: .mediaDir)): \(error.message)")
        }
        config.rooms.sourceRules = SourceRules(
            mediaDirectory: media, destinations: destinations, maxPerRoom: settings.maxSourcesPerRoom,
            maxTotal: settings.maxSources, srtPort: settings.srtPort, rtmpPort: settings.rtmpPort)
        config.rooms.maxViewersPerRoom = settings.maxViewers
        config.rooms.roomRecordingsMaxBytes = Int64(settings.recordingsRoomMaxBytes)
        config.rooms.iceServers = ICEServers(
            turnURLs: settings.turnURLs, turnSecret: settings.turnSecret,
            stunURLs: settings.stunURL.map { [$0] } ?? [])
    }

    /// Cohost's DTLS identity and its candidates' addresses. Without certificate files, a fresh identity per start:
    /// a browser checks it per session, through the answer's fingerprint.
    private func webRTC(into config: inout ServerConfiguration) throws {
        let announced = try publicIP()
        config.rooms.publicIP = announced
        do {
            let certificate: DTLSCertificate
            if let certPath = settings.dtlsCert, let keyPath = settings.dtlsKey {
                certificate = try DTLSCertificate(
                    certificatePEM: String(contentsOfFile: certPath, encoding: .utf8),
                    keyPEM: String(contentsOfFile: keyPath, encoding: .utf8))
            } else {
                certificate = try DTLSCertificate.generate()
            }
            let context = try DTLSContext(certificate: certificate)
            config.rooms.webRTC = WebRTCSettings(
                context: context, addresses: [announced] + (settings.publicIP6.map { [$0] } ?? []),
                tcpPort: settings.iceTCPPort == 0 ? nil : settings.iceTCPPort)
            // Both families on the one media port: IPv4 peers arrive mapped and are handled as IPv4.
            if settings.publicIP6 != nil { config.rtpHost = "::" }
        } catch {
            throw ServeConfigError("WebRTC: \(error)")
        }
    }

    /// The IPv4 address candidates carry: `public_ip` when given, else what `stun_url`'s server sees, else the
    /// default. A STUN server that does not answer stops the start: announcing a wrong address would fail every
    /// join later, quietly.
    private func publicIP() throws -> String {
        guard case .builtInDefault = settings.origin(of: .publicIP), let stun = settings.stunURL,
            let server = ICEServerURL(stun)
        else { return settings.publicIP }
        do {
            let address = try STUNProbe.publicIPv4(server: server)
            logger.info("public address from STUN", metadata: ["address": "\(address)", "server": "\(stun)"])
            return address
        } catch {
            throw ServeConfigError("\(settings.origin(of: .stunURL)): \(error)")
        }
    }

    private func store(into config: inout ServerConfiguration) throws {
        switch settings.storeLocation {
        case .sqlite(let path)?:
            do {
                // The data directory and the database are the server's alone (rooms, kicks, webhook journal).
                let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
                try FileManager.default.createDirectory(
                    atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
                var status = stat()
                if stat(directory, &status) == 0, status.st_uid == geteuid(), status.st_mode & 0o077 != 0 {
                    _ = chmod(directory, 0o700)
                }
                config.store = try SQLiteRoomStore(path: path)
            } catch {
                throw ServeConfigError("\(settings.origin(of: .store)): \(error)")
            }
            logger.info("room store", metadata: ["sqlite": "\(path)"])
        case .postgres(let url)?:
            try cluster(into: &config, url: url)
        case nil:
            break
        }
    }

    /// A PostgreSQL store is shared by the nodes of a cluster: this server becomes one of them.
    private func cluster(into config: inout ServerConfiguration, url: String) throws {
        let nodeID = settings.nodeID ?? Self.hostName
        let store: PostgresRoomStore
        do { store = try PostgresRoomStore(url: url, nodeID: nodeID) } catch {
            throw ServeConfigError("\(settings.origin(of: .store)): \(error)")
        }
        config.store = store
        let scheme = settings.tlsCert == nil ? "http" : "https"
        let apiURL = settings.nodeURL ?? "\(scheme)://\(settings.http.host):\(settings.http.port)"
        let media = "\(settings.publicIP):\(settings.rtpPort)"
        let timeoutMs = settings.nodeTimeout * 1000
        let logger = logger
        guard let secret = settings.clusterSecret else {
            throw ServeConfigError("\(settings.origin(of: .store)): a cluster node needs cluster_secret")
        }
        let peers = try policy(.clusterHosts, settings.clusterHosts, devMode: false)
        let acceptsPeer: @Sendable (String) -> Bool = { url in
            guard peers.allowed != nil else { return true }
            return URL(string: url)?.host.map { peers.allows(host: $0) } ?? false
        }
        config.makeCluster = { manager in
            let node = ClusterNode(
                store: store, manager: manager, apiURL: apiURL, mediaAddress: media, timeoutMs: timeoutMs,
                secret: secret, acceptsPeer: acceptsPeer, logger: logger)
            try node.start()
            return node
        }
        logger.info("cluster node", metadata: ["node": "\(nodeID)", "api": "\(apiURL)", "media": "\(media)"])
    }

    private func webhooks(into config: inout ServerConfiguration, devMode: Bool) throws {
        guard !settings.webhookURLs.isEmpty, let secret = settings.webhookSecret else { return }
        // A receiver holds this secret: were it an API key's, the receiver could mint tokens.
        if let key = config.keys.keys.first(where: { config.keys.secret(for: $0) == secret }) {
            throw ServeConfigError(
                "\(settings.origin(of: .webhookSecret)) is the secret of API key '\(key)': webhooks need a secret of "
                    + "their own (e.g. openssl rand -hex 32)")
        }
        let destinations = try policy(.webhookHosts, settings.webhookHosts, devMode: devMode)
        let urls = settings.webhookURLs.compactMap(WebhookURL.parse)
        // An address literal the rules refuse is refused at start; a name is checked at every delivery.
        for url in urls {
            if let refusal = destinations.refusal(host: url.host ?? "") {
                throw ServeConfigError("\(settings.origin(of: .webhookURL)): \(refusal)")
            }
        }
        let dispatcher = WebhookDispatcher(
            configuration: .init(urls: urls, secret: secret, destinations: destinations), logger: logger,
            journal: config.store as? any WebhookJournal)
        config.rooms.eventSinks.append(dispatcher)
        config.webhooks = dispatcher
        logger.info("webhooks on", metadata: ["urls": "\(settings.webhookURLs.count)"])
    }

    /// The node id when none is configured: the host name, made a valid id.
    static var hostName: String {
        let name = String(
            ProcessInfo.processInfo.hostName.map { $0.isLetter || $0.isNumber || "_.-".contains($0) ? $0 : "-" }
        ).prefix(64)
        return name.isEmpty ? "cohost" : String(name)
    }

    /// The keys spec and where it came from: `keys`, else the contents of `keys_file`; nil: none (dev mode).
    static func keysSpec(_ settings: ServeSettings) throws -> (String?, String) {
        if let spec = settings.keys, !spec.isEmpty { return (spec, "\(settings.origin(of: .keys))") }
        guard let path = settings.keysFile, !path.isEmpty else { return (nil, "") }
        let origin = "keys file \(path) (\(settings.origin(of: .keysFile)))"
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ServeConfigError("\(origin) cannot be read")
        }
        let spec = ExposurePolicy.keysSpec(fromFile: String(decoding: data, as: UTF8.self))
        guard !spec.isEmpty else { throw ServeConfigError("\(origin) holds no KEY:SECRET line") }
        return (spec, origin)
    }
}
