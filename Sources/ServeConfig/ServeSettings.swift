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
    public var webhookSecret: String?
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
    public var mediaDir: String?
    public var maxSources: Int?
    public var maxSourcesPerRoom: Int?
    public var srtPort: Int?
    public var rtmpPort: Int?
    public var maxViewers: Int?
    public var iceTCPPort: Int?
    public var turnURLs: [String]
    public var turnSecret: String?
    public var stunURL: String?
    public var maxConnectionsPerAddress: Int?
    public var recordingsMaxBytes: Int?
    public var webhookHosts: [String]
    public var clusterSecret: String?
    public var clusterHosts: [String]
    public var recordingsRoomMaxBytes: Int?

    public init(
        http: String? = nil, rtpPort: Int? = nil, publicIP: String? = nil, keys: String? = nil,
        keysFile: String? = nil, autoCreateRooms: Bool? = nil, maxTokenTTL: Int? = nil, recordingsDir: String? = nil,
        outputHosts: [String] = [], metricsToken: String? = nil, maxConnections: Int? = nil,
        participantTimeout: Int? = nil, emptyRoomTimeout: Int? = nil, decodeBudgetMs: Int? = nil,
        webhookURLs: [String] = [],
        webhookSecret: String? = nil, logLevel: String? = nil, corsOrigins: [String] = [], dtlsCert: String? = nil,
        dtlsKey: String? = nil, publicIP6: String? = nil, webDir: String? = nil, tlsCert: String? = nil,
        tlsKey: String? = nil, dataDir: String? = nil, store: String? = nil, nodeID: String? = nil,
        nodeURL: String? = nil, nodeTimeout: Int? = nil, mediaDir: String? = nil, maxSources: Int? = nil,
        maxSourcesPerRoom: Int? = nil, srtPort: Int? = nil, rtmpPort: Int? = nil, maxViewers: Int? = nil,
        iceTCPPort: Int? = nil, turnURLs: [String] = [], turnSecret: String? = nil, stunURL: String? = nil,
        maxConnectionsPerAddress: Int? = nil, recordingsMaxBytes: Int? = nil, webhookHosts: [String] = [],
        clusterSecret: String? = nil, clusterHosts: [String] = [], recordingsRoomMaxBytes: Int? = nil
    ) {
        self.recordingsRoomMaxBytes = recordingsRoomMaxBytes
        self.webhookHosts = webhookHosts
        self.clusterSecret = clusterSecret
        self.clusterHosts = clusterHosts
        self.maxConnectionsPerAddress = maxConnectionsPerAddress
        self.recordingsMaxBytes = recordingsMaxBytes
        self.iceTCPPort = iceTCPPort
        self.turnURLs = turnURLs
        self.turnSecret = turnSecret
        self.stunURL = stunURL
        self.maxViewers = maxViewers
        self.rtmpPort = rtmpPort
        self.srtPort = srtPort
        self.mediaDir = mediaDir
        self.maxSources = maxSources
        self.maxSourcesPerRoom = maxSourcesPerRoom
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
        self.webhookSecret = webhookSecret
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
    /// Hosts and CIDRs outputs and pulled sources may reach; empty: any public address (and loopback in dev mode).
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
    public var webhookSecret: String?
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
    /// Where `file://` sources are read from.
    public var mediaDir = Defaults.mediaDir
    /// Pulled sources running at once, on the server and in one room.
    public var maxSources = Defaults.maxSources
    public var maxSourcesPerRoom = Defaults.maxSourcesPerRoom
    /// The UDP port encoders push SRT to (`listen: "srt"` sources); 0: none.
    public var srtPort = Defaults.srtPort
    /// The TCP port encoders publish RTMP to (`listen: "rtmp"` sources); 0: none.
    public var rtmpPort = Defaults.rtmpPort
    /// WHEP viewers of one room at once.
    public var maxViewers = Defaults.maxViewers
    /// The ICE-TCP port (passive candidates beside the UDP ones); 0: none. Default: the media port's number.
    public var iceTCPPort = Defaults.rtpPort
    /// TURN servers handed to clients with credentials minted from `turnSecret` (coturn's `use-auth-secret`).
    public var turnURLs: [String] = []
    public var turnSecret: String?
    /// A STUN server asked at start for the public address, when `public_ip` is not given.
    public var stunURL: String?
    /// HTTP connections one remote address may hold at once; 0: only `maxConnections` caps them.
    public var maxConnectionsPerAddress = Defaults.maxConnectionsPerAddress
    /// What the recordings directory may hold, in bytes; 0: no quota.
    public var recordingsMaxBytes = 0
    /// Hosts and CIDRs webhooks may be delivered to; empty: any public address (and loopback in dev mode).
    public var webhookHosts: [String] = []
    /// What the nodes of a cluster sign forwarded calls with; required with a PostgreSQL store.
    public var clusterSecret: String?
    /// Hosts and CIDRs peers' API URLs may name; empty: any.
    public var clusterHosts: [String] = []
    /// What one room's recordings may write, in bytes, since it opened; 0: no quota per room.
    public var recordingsRoomMaxBytes = 0
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
        public static let mediaDir = "./media"
        public static let maxSources = 32
        public static let maxSourcesPerRoom = 8
        public static let srtPort = 0
        public static let rtmpPort = 0
        public static let maxViewers = 100
        public static let maxConnectionsPerAddress = 64
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

    /// `scheme://host[:port]` with nothing after it (RFC 6454), as a browser sends it in `Origin`.
    static func isWebOrigin(_ text: String) -> Bool {
        guard let range = text.range(of: "://") else { return false }
        let scheme = text[..<range.lowerBound]
        let rest = text[range.upperBound...]
        return (scheme == "http" || scheme == "https") && !rest.isEmpty && !rest.contains("/")
            && !rest.contains("?") && !rest.contains("#") && !rest.contains(" ")
    }
}
