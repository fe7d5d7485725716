/// One `cohost serve` setting, and its name in each place it can be given.
///
/// One mechanical rule names all three, so operators never look a name up: the config-file key is
/// snake_case (`rtp_port`), the flag is the same in kebab-case (`--rtp-port`), and the environment
/// variable is `COHOST_` plus the key in upper case (`COHOST_RTP_PORT`).
public enum SettingKey: String, CaseIterable, Sendable, Hashable, Comparable {
    case http
    case rtpPort = "rtp_port"
    case publicIP = "public_ip"
    case keys
    case keysFile = "keys_file"
    case autoCreateRooms = "auto_create_rooms"
    case maxTokenTTL = "max_token_ttl"
    case recordingsDir = "recordings_dir"
    case outputHosts = "output_hosts"
    case metricsToken = "metrics_token"
    case maxConnections = "max_connections"
    case participantTimeout = "participant_timeout"
    case emptyRoomTimeout = "empty_room_timeout"
    case decodeBudgetMs = "decode_budget_ms"
    case webhookURL = "webhook_url"
    case webhookSecret = "webhook_secret"
    case logLevel = "log_level"
    case corsOrigins = "cors_origins"
    case dtlsCert = "dtls_cert"
    case dtlsKey = "dtls_key"
    case publicIP6 = "public_ip6"
    case webDir = "web_dir"
    case tlsCert = "tls_cert"
    case tlsKey = "tls_key"
    case dataDir = "data_dir"
    case store
    case nodeID = "node_id"
    case nodeURL = "node_url"
    case nodeTimeout = "node_timeout"
    case mediaDir = "media_dir"
    case maxSources = "max_sources"
    case maxSourcesPerRoom = "max_sources_per_room"
    case srtPort = "srt_port"
    case rtmpPort = "rtmp_port"
    case maxViewers = "max_viewers"
    case iceTCPPort = "ice_tcp_port"
    case turnURLs = "turn_urls"
    case turnSecret = "turn_secret"
    case stunURL = "stun_url"
    case maxConnectionsPerAddress = "max_connections_per_address"
    case recordingsMaxBytes = "recordings_max_bytes"
    case webhookHosts = "webhook_hosts"
    case clusterSecret = "cluster_secret"
    case clusterHosts = "cluster_hosts"
    case recordingsRoomMaxBytes = "recordings_room_max_bytes"

    /// The key in the TOML config file.
    public var fileKey: String { rawValue }
    /// The environment variable.
    public var envVar: String { "COHOST_" + rawValue.uppercased() }
    /// The command-line flag.
    public var flag: String { "--" + String(rawValue.map { $0 == "_" ? "-" : $0 }) }

    /// What the value is, for type errors and the docs.
    public var kind: Kind {
        switch self {
        case .rtpPort, .participantTimeout, .emptyRoomTimeout, .maxTokenTTL, .decodeBudgetMs, .maxConnections,
            .nodeTimeout, .maxSources, .maxSourcesPerRoom, .srtPort, .rtmpPort, .maxViewers,
            .iceTCPPort, .maxConnectionsPerAddress, .recordingsMaxBytes, .recordingsRoomMaxBytes:
            .integer
        case .autoCreateRooms: .boolean
        case .webhookURL, .outputHosts, .corsOrigins, .turnURLs, .webhookHosts, .clusterHosts: .stringList
        case .http, .publicIP, .keys, .keysFile, .recordingsDir, .metricsToken, .webhookSecret, .logLevel, .dtlsCert,
            .dtlsKey, .publicIP6, .webDir, .tlsCert, .tlsKey, .dataDir, .store, .nodeID, .nodeURL, .mediaDir,
            .turnSecret, .stunURL, .clusterSecret:
            .string
        }
    }

    /// The value types a setting can have.
    public enum Kind: Sendable {
        case string, integer, boolean, stringList

        /// As said in an error: "must be <description>".
        public var description: String {
            switch self {
            case .string: "a string"
            case .integer: "an integer"
            case .boolean: "a boolean"
            case .stringList: "an array of strings"
            }
        }
    }

    /// Declaration order, so errors and listings come out in the order the docs use.
    public static func < (lhs: SettingKey, rhs: SettingKey) -> Bool {
        let all = SettingKey.allCases
        return (all.firstIndex(of: lhs) ?? 0) < (all.firstIndex(of: rhs) ?? 0)
    }

    /// The setting a config-file key names, if any.
    public init?(fileKey: String) { self.init(rawValue: fileKey) }

    /// The environment variable naming the config file itself (the flag is `--config`).
    public static let configEnvVar = "COHOST_CONFIG"
}

/// Where a setting's value came from, so a refused value names the place to fix.
public enum SettingOrigin: Sendable, Equatable, CustomStringConvertible {
    case flag(SettingKey)
    case environment(SettingKey)
    /// A key of the config file at `path`; `line` when the key could be found in the text.
    case file(SettingKey, path: String, line: Int?)
    case builtInDefault(SettingKey)

    public var description: String {
        switch self {
        case .flag(let key): key.flag
        case .environment(let key): "environment variable \(key.envVar)"
        case .file(let key, let path, let line):
            "'\(key.fileKey)' in config file \(path)" + (line.map { " (line \($0))" } ?? "")
        case .builtInDefault(let key): "the built-in default of \(key.flag)"
        }
    }
}
