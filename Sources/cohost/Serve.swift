import Foundation
import ArgumentParser
import Logging
import Metrics
import Prometheus
import Server
import ServeConfig

/// `cohost serve`: runs the server until SIGINT/SIGTERM.
///
/// Every option is optional here so "not given" is visible: the value used is the flag, else the
/// `COHOST_*` environment variable, else the `--config` file, else the built-in default
/// (`ServeSettings.resolve`, documented in deploy/README.md).
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the server.",
        discussion: """
            Each option can also be set by the environment variable COHOST_<NAME> (e.g. COHOST_RTP_PORT) or by the \
            key <name> (e.g. rtp_port) in the TOML file given by --config or COHOST_CONFIG. A flag beats the \
            environment, which beats the file, which beats the built-in default. See deploy/cohost.example.toml.
            """)

    @Option(help: ArgumentHelp("TOML config file (env COHOST_CONFIG); unknown keys are refused.", valueName: "file"))
    var config: String?

    @Option(
        help: ArgumentHelp(
            "HTTP API listener, HOST:PORT (default \(ServeSettings.Defaults.http)).", valueName: "host:port"))
    var http: String?

    @Option(
        name: .customLong("rtp-port"),
        help: "UDP media port; RTCP is also accepted on the port above it (default \(ServeSettings.Defaults.rtpPort)).")
    var rtpPort: Int?

    @Option(
        name: .customLong("public-ip"),
        help: "IPv4 address written into SDP answers (default \(ServeSettings.Defaults.publicIP)).")
    var publicIP: String?

    @Option(
        help: """
            API keys as KEY:SECRET[,KEY2:SECRET2] (or env COHOST_KEYS); secrets of at least 32 bytes. None: dev mode             with devkey:devsecret, on a loopback --http only.
            """)
    var keys: String?

    @Option(
        name: .customLong("keys-file"),
        help: ArgumentHelp(
            "A file of KEY:SECRET lines, instead of --keys (keeps secrets out of ps).", valueName: "file"))
    var keysFile: String?

    @Option(
        name: .customLong("auto-create-rooms"),
        help: "Whether a participant's join creates a missing room: true or false (default: true only in dev mode).")
    var autoCreateRooms: Bool?

    @Option(
        name: .customLong("max-token-ttl"),
        help:
            "Longest token lifetime accepted, s; a kick outlives its room this long (default \(ServeSettings.Defaults.maxTokenTTL))."
    )
    var maxTokenTTL: Int?

    @Option(
        name: .customLong("decode-budget-ms"),
        help:
            "Decoder CPU time, ms a second, each participant's video may use before it is held to keyframes (default \(ServeSettings.Defaults.decodeBudgetMs))."
    )
    var decodeBudgetMs: Int?

    @Option(
        name: .customLong("recordings-dir"),
        help:
            "Directory file:// outputs write into, created at start (default \(ServeSettings.Defaults.recordingsDir)).")
    var recordingsDir: String?

    @Option(
        name: .customLong("output-hosts"),
        help:
            "A host or CIDR outputs and pulled sources may reach (repeatable; env COHOST_OUTPUT_HOSTS, comma separated). None: any public address."
    )
    var outputHosts: [String] = []

    @Option(
        name: .customLong("webhook-hosts"),
        help:
            "A host or CIDR webhooks may be delivered to (repeatable; env COHOST_WEBHOOK_HOSTS, comma separated). None: any public address."
    )
    var webhookHosts: [String] = []

    @Option(
        name: .customLong("cluster-secret"),
        help:
            "The secret the nodes of a cluster sign forwarded calls with (at least 32 bytes; the same on every node); required with a PostgreSQL store."
    )
    var clusterSecret: String?

    @Option(
        name: .customLong("cluster-hosts"),
        help:
            "A host or CIDR a peer node's API URL may name (repeatable; env COHOST_CLUSTER_HOSTS, comma separated). None: any."
    )
    var clusterHosts: [String] = []

    @Option(
        name: .customLong("metrics-token"),
        help: "Bearer token /metrics requires (at least 16 characters). None: /metrics is open.")
    var metricsToken: String?

    @Option(
        name: .customLong("max-connections"),
        help: "Concurrent HTTP connections; more are closed at once (default \(ServeSettings.Defaults.maxConnections))."
    )
    var maxConnections: Int?

    @Option(
        name: .customLong("participant-timeout"),
        help:
            "Seconds without packets before a participant leaves with reason timeout (default \(ServeSettings.Defaults.participantTimeout))."
    )
    var participantTimeout: Int?

    @Option(
        name: .customLong("empty-room-timeout"),
        help:
            "Seconds a room may stay empty before it closes by itself; 0 = never (default \(ServeSettings.Defaults.emptyRoomTimeout))."
    )
    var emptyRoomTimeout: Int?

    @Option(
        name: .customLong("webhook-url"),
        help: "POST every room event here (repeatable; http or https; env: comma separated). See protocol/webhooks.md.")
    var webhookURLs: [String] = []

    @Option(
        name: .customLong("webhook-secret"),
        help:
            "The secret webhook deliveries are signed with, needed with --webhook-url: its own, never an API key's (at least 32 bytes)."
    )
    var webhookSecret: String?

    @Option(
        name: .customLong("log-level"),
        help: "trace, debug, info, notice, warning, error, critical (default \(ServeSettings.Defaults.logLevel)).")
    var logLevel: String?

    @Option(
        name: .customLong("cors-origins"),
        help:
            "A web origin whose pages may call the API from a browser, e.g. https://show.example.com (repeatable; env: comma separated; * for any)."
    )
    var corsOrigins: [String] = []

    @Option(
        name: .customLong("dtls-cert"),
        help: "PEM certificate for WebRTC's DTLS (with --dtls-key). None: a fresh ECDSA P-256 one each start.")
    var dtlsCert: String?

    @Option(name: .customLong("dtls-key"), help: "PEM private key of --dtls-cert.")
    var dtlsKey: String?

    @Option(
        name: .customLong("public-ip6"),
        help: "IPv6 address offered as a second WebRTC host candidate; the media port then listens on IPv6 too.")
    var publicIP6: String?

    @Option(
        name: .customLong("web-dir"),
        help: "Directory of the console and join page files (default \(ServeSettings.Defaults.webDir)), served at /.")
    var webDir: String?

    @Option(
        name: .customLong("tls-cert"),
        help: "PEM certificate chain: serve the API, events and pages over HTTPS (with --tls-key; reread on SIGHUP).")
    var tlsCert: String?

    @Option(name: .customLong("tls-key"), help: "PEM private key of --tls-cert.")
    var tlsKey: String?

    @Option(
        name: .customLong("data-dir"),
        help: "Directory of the server's files: the room store's database (default \(ServeSettings.Defaults.dataDir)).")
    var dataDir: String?

    @Option(
        help: """
            Where rooms outlive a restart: sqlite (<data-dir>/cohost.db, the default), sqlite:PATH, postgres://… \
            (the nodes of a cluster share it), or none (memory only).
            """)
    var store: String?

    @Option(name: .customLong("node-id"), help: "This node's id in a cluster (default: the host name).")
    var nodeID: String?

    @Option(
        name: .customLong("node-url"), help: "This node's API as the other nodes reach it (default: http://<--http>).")
    var nodeURL: String?

    @Option(
        name: .customLong("node-timeout"),
        help: "Seconds without a heartbeat before a node's rooms go to the others (default 10).")
    var nodeTimeout: Int?

    @Option(
        name: .customLong("media-dir"),
        help: "Directory file:// sources are read from, created at start (default \(ServeSettings.Defaults.mediaDir)).")
    var mediaDir: String?

    @Option(
        name: .customLong("max-sources"),
        help: "Pulled sources running at once on this server (default \(ServeSettings.Defaults.maxSources)).")
    var maxSources: Int?

    @Option(
        name: .customLong("max-sources-per-room"),
        help: "Pulled sources running at once in one room (default \(ServeSettings.Defaults.maxSourcesPerRoom)).")
    var maxSourcesPerRoom: Int?

    @Option(
        name: .customLong("srt-port"),
        help: "UDP port encoders push SRT to, for sources added with listen \"srt\" (default 0: none).")
    var srtPort: Int?

    @Option(
        name: .customLong("rtmp-port"),
        help: "TCP port encoders publish RTMP to, for sources added with listen \"rtmp\" (default 0: none).")
    var rtmpPort: Int?

    @Option(
        name: .customLong("max-viewers"),
        help: "WHEP viewers of one room at once (default \(ServeSettings.Defaults.maxViewers)).")
    var maxViewers: Int?

    @Option(
        name: .customLong("ice-tcp-port"),
        help: "TCP port of ICE-TCP, for guests whose UDP is blocked (default: the --rtp-port number; 0: none).")
    var iceTCPPort: Int?

    @Option(
        name: .customLong("turn-urls"),
        help:
            "A TURN server handed to clients, e.g. turn:turn.example.com:3478?transport=udp (repeatable; env: comma separated)."
    )
    var turnURLs: [String] = []

    @Option(
        name: .customLong("turn-secret"),
        help: "The TURN server's static-auth-secret: Cohost mints each client's TURN credentials with it.")
    var turnSecret: String?

    @Option(
        name: .customLong("stun-url"),
        help: "A STUN server asked at start for the public address when --public-ip is not given (stun:HOST:PORT).")
    var stunURL: String?

    @Option(
        name: .customLong("max-connections-per-address"),
        help:
            "HTTP connections one remote address may hold at once (default \(ServeSettings.Defaults.maxConnectionsPerAddress); 0: no cap per address)."
    )
    var maxConnectionsPerAddress: Int?

    @Option(
        name: .customLong("recordings-max-bytes"),
        help:
            "What the recordings directory may hold, in bytes; a recording that would pass it stops (default 0: no quota)."
    )
    var recordingsMaxBytes: Int?

    @Option(
        name: .customLong("recordings-room-max-bytes"),
        help:
            "What one room's recordings may write since it opened, in bytes; its recording that would pass it stops (default 0: no quota per room)."
    )
    var recordingsRoomMaxBytes: Int?

    var flags: ServeFlags {
        ServeFlags(
            http: http, rtpPort: rtpPort, publicIP: publicIP, keys: keys, keysFile: keysFile,
            autoCreateRooms: autoCreateRooms, maxTokenTTL: maxTokenTTL, recordingsDir: recordingsDir,
            outputHosts: outputHosts, metricsToken: metricsToken, maxConnections: maxConnections,
            participantTimeout: participantTimeout,
            emptyRoomTimeout: emptyRoomTimeout, decodeBudgetMs: decodeBudgetMs, webhookURLs: webhookURLs,
            webhookSecret: webhookSecret, logLevel: logLevel, corsOrigins: corsOrigins, dtlsCert: dtlsCert,
            dtlsKey: dtlsKey, publicIP6: publicIP6, webDir: webDir, tlsCert: tlsCert, tlsKey: tlsKey, dataDir: dataDir,
            store: store, nodeID: nodeID, nodeURL: nodeURL, nodeTimeout: nodeTimeout, mediaDir: mediaDir,
            maxSources: maxSources, maxSourcesPerRoom: maxSourcesPerRoom, srtPort: srtPort,
            rtmpPort: rtmpPort, maxViewers: maxViewers, iceTCPPort: iceTCPPort, turnURLs: turnURLs,
            turnSecret: turnSecret, stunURL: stunURL, maxConnectionsPerAddress: maxConnectionsPerAddress,
            recordingsMaxBytes: recordingsMaxBytes, webhookHosts: webhookHosts, clusterSecret: clusterSecret,
            clusterHosts: clusterHosts, recordingsRoomMaxBytes: recordingsRoomMaxBytes)
    }

    /// Reads the config file (if any) and merges every source; a refused value stops the start with its source named.
    func settings(environment env: [String: String]) throws -> (ServeSettings, configPath: String?) {
        let path = ServeSettings.configPath(flag: config, env: env)
        let file = try path.map { path throws(ServeConfigError) in try ConfigFile.load(path: path) }
        return (try ServeSettings.resolve(flags: flags, env: env, file: file), path)
    }

    func run() async throws {
        let (settings, configPath) = try settings(environment: ProcessInfo.processInfo.environment)
        let level = settings.logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "cohost")
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))

        let config = try ServerAssembly(settings: settings, logger: logger).configuration()
        logger.info(
            "cohost starting",
            metadata: [
                "http": "\(settings.http.host):\(settings.http.port)", "rtp": "\(settings.rtpPort)",
                "publicIP": "\(settings.publicIP)",
                "config": "\(configPath ?? "none")",
            ])
        try await CohostServer.run(configuration: config, registry: registry, logger: logger)
    }
}
