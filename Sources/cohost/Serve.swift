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

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error, critical.")
    var logLevel = "info"

    func validate() throws {
        guard HostPort(http) != nil else { throw ValidationError("--http must be HOST:PORT with a port in 1...65535, got '\(http)'") }
        guard (1...65534).contains(rtpPort) else { throw ValidationError("--rtp-port must be within 1...65534 (RTCP uses the port above)") }
        guard IPv4(publicIP) else { throw ValidationError("--public-ip must be an IPv4 address, got '\(publicIP)'") }
        guard (1...3600).contains(participantTimeout) else { throw ValidationError("--participant-timeout must be within 1...3600 s") }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown --log-level '\(logLevel)'") }
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
        config.rooms = RoomSettings(publicIP: publicIP, rtpPort: rtpPort, participantTimeoutMs: Int64(participantTimeout) * 1000)
        let spec = keys ?? ProcessInfo.processInfo.environment["COHOST_KEYS"]
        if let spec, !spec.isEmpty {
            do { config.keys = try APIKeys.parse(spec) } catch { throw ValidationError("--keys: \(error)") }
        } else {
            config.keys = .dev
            logger.warning("""
                *** DEV MODE: no --keys and no COHOST_KEYS; accepting tokens signed with key 'devkey', secret 'devsecret'. \
                Anyone can mint admin tokens. Never expose this server. ***
                """)
        }
        logger.info("cohost starting", metadata: ["http": "\(http)", "rtp": "\(rtpPort)", "publicIP": "\(publicIP)"])
        try await CohostServer.run(configuration: config, registry: registry, logger: logger)
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
