import Foundation
import ArgumentParser
import Logging
import Metrics
import Prometheus
import Rooms
import Server

/// `cohost serve`: runs the server until SIGINT/SIGTERM.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the server.")

    @Option(help: "HTTP API listener, HOST:PORT.")
    var http = "127.0.0.1:7880"

    @Option(name: .customLong("rtp-port"), help: "UDP media port (RTCP is also accepted on the port above it).")
    var rtpPort = 7882

    @Option(name: .customLong("public-ip"), help: "IPv4 address written into SDP answers.")
    var publicIP = "127.0.0.1"

    @Option(help: "API keys as KEY:SECRET[,KEY2:SECRET2] (or env COHOST_KEYS). None: dev mode with devkey:devsecret.")
    var keys: String?

    @Option(name: .customLong("participant-timeout"), help: "Seconds without packets before a participant leaves with reason timeout.")
    var participantTimeout = 10

    @Option(name: .customLong("empty-room-timeout"), help: "Seconds a room may stay empty before it closes by itself; 0 = never.")
    var emptyRoomTimeout = 300

    @Option(name: .customLong("webhook-url"), help: "POST every room event here (repeatable; http or https). See protocol/webhooks.md.")
    var webhookURLs: [String] = []

    @Option(name: .customLong("webhook-key"), help: "The API key whose secret signs webhook deliveries (default: the first of --keys).")
    var webhookKey: String?

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error, critical.")
    var logLevel = "info"

    func validate() throws {
        guard HostPort(http) != nil else { throw ValidationError("--http must be HOST:PORT with a port in 1...65535, got '\(http)'") }
        guard (1...65534).contains(rtpPort) else { throw ValidationError("--rtp-port must be within 1...65534 (RTCP uses the port above)") }
        guard IPv4(publicIP) else { throw ValidationError("--public-ip must be an IPv4 address, got '\(publicIP)'") }
        guard (1...3600).contains(participantTimeout) else { throw ValidationError("--participant-timeout must be within 1...3600 s") }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown --log-level '\(logLevel)'") }
        guard (0...86_400).contains(emptyRoomTimeout) else { throw ValidationError("--empty-room-timeout must be within 0...86400 s (0 = never)") }
        for url in webhookURLs where WebhookURL.parse(url) == nil {
            throw ValidationError("--webhook-url must be an absolute http:// or https:// URL with a host, got '\(url)'")
        }
        if webhookKey != nil && webhookURLs.isEmpty { throw ValidationError("--webhook-key needs at least one --webhook-url") }
    }

    func run() async throws {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "cohost")
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))

        var config = ServerConfiguration()
        let endpoint = HostPort(http)!
        config.httpHost = endpoint.host
        config.httpPort = endpoint.port
        config.rooms = RoomSettings(publicIP: publicIP, rtpPort: rtpPort, participantTimeoutMs: Int64(participantTimeout) * 1000,
                                    emptyRoomTimeoutMs: Int64(emptyRoomTimeout) * 1000)
        let spec = keys ?? ProcessInfo.processInfo.environment["COHOST_KEYS"]
        var firstKey = "devkey"
        if let spec, !spec.isEmpty {
            do { config.keys = try APIKeys.parse(spec) } catch { throw ValidationError("--keys: \(error)") }
            // APIKeys keeps no order; "the first key" is the first one listed.
            firstKey = spec.split(separator: ",").first.flatMap { $0.split(separator: ":").first }
                .map { $0.trimmingCharacters(in: .whitespaces) } ?? firstKey
        } else {
            config.keys = .dev
            logger.warning("""
                *** DEV MODE: no --keys and no COHOST_KEYS; accepting tokens signed with key 'devkey', secret 'devsecret'. \
                Anyone can mint admin tokens. Never expose this server. ***
                """)
        }
        var webhooks: WebhookDispatcher?
        if !webhookURLs.isEmpty {
            let keyID = webhookKey ?? firstKey
            guard let secret = config.keys.secret(for: keyID) else {
                throw ValidationError("--webhook-key '\(keyID)' is not one of the configured API keys (\(config.keys.keys.joined(separator: ", ")))")
            }
            let dispatcher = WebhookDispatcher(
                configuration: .init(urls: webhookURLs.compactMap(WebhookURL.parse), keyID: keyID, secret: secret), logger: logger)
            config.rooms.eventSinks.append(dispatcher)
            webhooks = dispatcher
            logger.info("webhooks on", metadata: ["urls": "\(webhookURLs.count)", "key": "\(keyID)"])
        }
        logger.info("cohost starting", metadata: ["http": "\(http)", "rtp": "\(rtpPort)", "publicIP": "\(publicIP)"])
        try await CohostServer.run(configuration: config, registry: registry, logger: logger)
        // Shutdown closed every room: give those last events a few seconds to reach the receivers.
        if let webhooks {
            if !(await webhooks.drain(timeout: 5)) { logger.warning("webhook deliveries still pending at exit were dropped") }
            webhooks.stop()
        }
    }
}

/// `--webhook-url` values: absolute http(s) URLs with a host.
enum WebhookURL {
    static func parse(_ text: String) -> URL? {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = url.host, !host.isEmpty else { return nil }
        return url
    }
}

struct HostPort {
    let host: String
    let port: Int
    init?(_ text: String) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
              (1...65535).contains(port), colon > text.startIndex else { return nil }
        host = String(text[..<colon])
        self.port = port
    }
}

func IPv4(_ text: String) -> Bool {
    let parts = text.split(separator: ".", omittingEmptySubsequences: false)
    return parts.count == 4 && parts.allSatisfy { p in p.count <= 3 && UInt8(p) != nil }
}
