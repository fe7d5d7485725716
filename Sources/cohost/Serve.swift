import Foundation
import ArgumentParser
import Logging
import Metrics
import Prometheus
import Rooms
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

    @Option(help: "API keys as KEY:SECRET[,KEY2:SECRET2] (or env COHOST_KEYS). None: dev mode with devkey:devsecret.")
    var keys: String?

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
        name: .customLong("webhook-key"),
        help: "The API key whose secret signs webhook deliveries (default: the first of --keys).")
    var webhookKey: String?

    @Option(
        name: .customLong("log-level"),
        help: "trace, debug, info, notice, warning, error, critical (default \(ServeSettings.Defaults.logLevel)).")
    var logLevel: String?

    var flags: ServeFlags {
        ServeFlags(
            http: http, rtpPort: rtpPort, publicIP: publicIP, keys: keys, participantTimeout: participantTimeout,
            emptyRoomTimeout: emptyRoomTimeout, webhookURLs: webhookURLs, webhookKey: webhookKey, logLevel: logLevel)
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

        var config = ServerConfiguration()
        config.httpHost = settings.http.host
        config.httpPort = settings.http.port
        config.rooms = RoomSettings(
            publicIP: settings.publicIP, rtpPort: settings.rtpPort,
            participantTimeoutMs: Int64(settings.participantTimeout) * 1000,
            emptyRoomTimeoutMs: Int64(settings.emptyRoomTimeout) * 1000)
        var firstKey = "devkey"
        if let spec = settings.keys, !spec.isEmpty {
            do { config.keys = try APIKeys.parse(spec) } catch {
                throw ServeConfigError("\(settings.origin(of: .keys)): \(error)")
            }
            // APIKeys keeps no order; "the first key" is the first one listed.
            firstKey =
                spec.split(separator: ",").first.flatMap { $0.split(separator: ":").first }
                .map { $0.trimmingCharacters(in: .whitespaces) } ?? firstKey
        } else {
            config.keys = .dev
            logger.warning(
                """
                *** DEV MODE: no API keys (--keys, COHOST_KEYS or keys in the config file); accepting tokens signed with \
                key 'devkey', secret 'devsecret'. Anyone can mint admin tokens. Never expose this server. ***
                """)
        }
        var webhooks: WebhookDispatcher?
        if !settings.webhookURLs.isEmpty {
            let keyID = settings.webhookKey ?? firstKey
            guard let secret = config.keys.secret(for: keyID) else {
                let origin = settings.webhookKey == nil ? "the first API key" : "\(settings.origin(of: .webhookKey))"
                throw ServeConfigError(
                    "\(origin) '\(keyID)' is not one of the configured API keys (\(config.keys.keys.joined(separator: ", ")))"
                )
            }
            let dispatcher = WebhookDispatcher(
                configuration: .init(
                    urls: settings.webhookURLs.compactMap(WebhookURL.parse), keyID: keyID, secret: secret),
                logger: logger)
            config.rooms.eventSinks.append(dispatcher)
            webhooks = dispatcher
            logger.info("webhooks on", metadata: ["urls": "\(settings.webhookURLs.count)", "key": "\(keyID)"])
        }
        logger.info(
            "cohost starting",
            metadata: [
                "http": "\(settings.http.host):\(settings.http.port)", "rtp": "\(settings.rtpPort)",
                "publicIP": "\(settings.publicIP)",
                "config": "\(configPath ?? "none")",
            ])
        try await CohostServer.run(configuration: config, registry: registry, logger: logger)
        // Shutdown closed every room: give those last events a few seconds to reach the receivers.
        if let webhooks {
            if !(await webhooks.drain(timeout: 5)) {
                logger.warning("webhook deliveries still pending at exit were dropped")
            }
            webhooks.stop()
        }
    }
}
