import Foundation

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
    init(_ sources: Sources) throws(ServeConfigError) {
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
struct Sources {
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
