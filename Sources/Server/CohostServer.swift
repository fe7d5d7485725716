import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import HummingbirdWebSocket
import Logging
import NIOCore
import Prometheus
import Rooms
import MediaSources
import ServiceLifecycle

/// Everything `cohost serve` runs: the HTTP API (with the events WebSocket), the UDP media
/// endpoint and the rooms, as services of one `ServiceGroup`.
public struct ServerConfiguration: Sendable {
    public var httpHost: String = "127.0.0.1"
    public var httpPort: Int = 7880
    public var rtpHost: String = "0.0.0.0"
    public var rooms = RoomSettings()
    public var keys: APIKeys = .dev
    /// A bearer token `/metrics` requires; nil: open (it names rooms and users).
    public var metricsToken: String?
    /// An HTTP connection with no request for this long is closed (idle keep-alive, half-open, slow clients).
    public var idleTimeout: TimeAmount = .seconds(30)
    /// HTTP connections open at once, in all and from one address (0: no such cap); one beyond is closed when
    /// accepted (`ConnectionLimit`).
    public var maxConnections = 1024
    public var maxConnectionsPerAddress = 64
    /// How long a request's head and its body may take to arrive (`RequestDeadlines`).
    public var requestDeadlines = RequestDeadlines()
    /// Origins whose pages may call the API from a browser (`CORSPolicy`).
    public var corsOrigins: [String] = []
    /// The console's files; nil or a directory without them: no pages are served.
    public var webDirectory: String?
    /// HTTPS instead of HTTP.
    public var tls: TLSIdentity?
    /// Where rooms outlive the process (restored at start); nil: in memory only.
    public var store: (any RoomStore)?
    /// Makes this server a cluster node once its rooms are restored (a shared PostgreSQL store); nil: a single
    /// server.
    public var makeCluster: (@Sendable (RoomManager) throws -> any ClusterView)?
    /// Delivers every room's events to the webhook URLs; also one of the rooms' event sinks.
    public var webhooks: WebhookDispatcher?
    public init() {}
}

public enum CohostServer {
    /// The Hummingbird router with every route; tested in-process.
    public static func makeRouter(
        manager: RoomManager, keys: APIKeys, registry: PrometheusCollectorRegistry, metricsToken: String? = nil,
        connections: ConnectionLimit? = nil, corsOrigins: [String] = [], webDirectory: String? = nil,
        cluster: (any ClusterView)? = nil, iceTCP: ICETCPListener? = nil, https: Bool = false
    ) -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        let origins = WebOrigins(corsOrigins: corsOrigins, loopbackHostsOnly: keys.isDev)
        // Served over HTTPS: browsers are told to keep to it (a year, RFC 6797).
        if https { router.middlewares.add(StrictTransportSecurity()) }
        // Outermost, so error responses carry the CORS headers too (a page must be able to read them).
        if !corsOrigins.isEmpty { router.middlewares.add(CORSPolicy(origins: corsOrigins)) }
        router.middlewares.add(ErrorShapeMiddleware())
        if let connections {
            router.middlewares.add(
                ConnectionReserve(
                    connections: connections, keys: keys, maxTokenTTLSeconds: manager.settings.maxTokenTTLSeconds))
        }
        if origins.loopbackHostsOnly { router.middlewares.add(LoopbackHostOnly(origins: origins)) }
        if let cluster {
            router.middlewares.add(ForwardedCallCheck(secret: cluster.secret))
            router.middlewares.add(
                ClusterProxy(cluster: cluster, keys: keys, maxTokenTTLSeconds: manager.settings.maxTokenTTLSeconds))
        }
        NodesRoute(cluster: cluster, manager: manager, keys: keys).register(on: router)
        router.get("healthz") { _, _ in "ok\n" }
        let metrics = MetricsEndpoint(
            manager: manager, registry: registry, connections: connections, iceTCP: iceTCP)
        router.get("metrics") { request, _ in
            if let metricsToken, !MetricsEndpoint.authorizes(request.headers[.authorization], token: metricsToken) {
                throw APIError(
                    status: .unauthorized, code: "metrics_token_required",
                    message: "/metrics needs 'Authorization: Bearer <metrics_token>'")
            }
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: metrics.render())))
        }
        RoomRoutes(manager: manager, keys: keys, cluster: cluster, origins: origins).register(on: router)
        WHIPRoutes(manager: manager, keys: keys).register(on: router)
        WHEPRoutes(manager: manager, keys: keys).register(on: router)
        ICEServersRoute(manager: manager, keys: keys).register(on: router)
        if let webDirectory { WebPages(directory: URL(fileURLWithPath: webDirectory)).register(on: router) }
        MethodTable.register(on: router, withPages: webDirectory != nil)
        SnapshotRoute(manager: manager, keys: keys).register(on: router)
        HLSRoute(manager: manager, keys: keys).register(on: router)
        return router
    }

    public static func makeApplication(
        manager: RoomManager, configuration: ServerConfiguration,
        registry: PrometheusCollectorRegistry, logger: Logger, cluster: (any ClusterView)? = nil,
        iceTCP: ICETCPListener? = nil
    ) -> some ApplicationProtocol {
        let connections = ConnectionLimit(
            limit: configuration.maxConnections, perAddress: configuration.maxConnectionsPerAddress,
            deadlines: configuration.requestDeadlines)
        let router = makeRouter(
            manager: manager, keys: configuration.keys, registry: registry, metricsToken: configuration.metricsToken,
            connections: connections, corsOrigins: configuration.corsOrigins, webDirectory: configuration.webDirectory,
            cluster: cluster, iceTCP: iceTCP, https: configuration.tls != nil)
        let keys = configuration.keys
        let origins = WebOrigins(corsOrigins: configuration.corsOrigins, loopbackHostsOnly: keys.isDev)
        let http1 = HTTP1WebSocketUpgradeChannel.Configuration(
            http1: .init(
                additionalChannelHandlers: [RequestDeadlines.Progress()], idleTimeout: configuration.idleTimeout))
        return Application(
            router: router,
            server: HTTPServerBuilder { responder in
                let channel = HTTP1WebSocketUpgradeChannel(responder: responder, configuration: http1) {
                    request, channel, _ in
                    let answer = EventsSocket.shouldUpgrade(
                        request, manager: manager, keys: keys, cluster: cluster, origins: origins)
                    // A WebSocket is no HTTP request any more: its frames have no deadlines.
                    if case .upgrade = answer {
                        channel.triggerUserOutboundEvent(RequestDeadlines.Event.leftHTTP, promise: nil)
                    }
                    return answer
                }
                guard let tls = configuration.tls else { return connections.wrapping(channel) }
                return connections.wrapping(try TLSChannel(channel, tlsConfiguration: tls.configuration))
            },
            configuration: .init(
                address: .hostname(configuration.httpHost, port: configuration.httpPort),
                serverName: "cohost"),
            logger: logger)
    }

    /// Binds the media port, restores stored rooms, then runs every service (`ServerServices`, which states the
    /// shutdown order) until SIGINT/SIGTERM.
    public static func run(
        configuration: ServerConfiguration, registry: PrometheusCollectorRegistry, logger: Logger
    ) async throws {
        let manager = RoomManager(settings: configuration.rooms, logger: logger, store: configuration.store)
        let media = MediaEndpoint(
            manager: manager, host: configuration.rtpHost, port: configuration.rooms.rtpPort,
            tcpPort: configuration.rooms.webRTC?.tcpPort, logger: logger)
        try await media.bind()
        // One SRT and one RTMP port for every room's pushed sources, when configured.
        var srt: SRTListener?
        var rtmp: RTMPListener?
        let rules = configuration.rooms.sourceRules
        do {
            if rules.srtPort > 0 { srt = try SRTListener(host: "0.0.0.0", port: rules.srtPort) }
            if rules.rtmpPort > 0 { rtmp = try RTMPListener(host: "0.0.0.0", port: rules.rtmpPort) }
        } catch {
            srt?.stop()
            manager.shutdown()
            throw error
        }
        if let srt { manager.attach(srt: srt) }
        if let rtmp { manager.attach(rtmp: rtmp) }
        // Before the API answers: a restored room is there for the first call, its outputs pushing already.
        do { try manager.restore() } catch {
            manager.shutdown()
            throw error
        }
        let cluster: (any ClusterView)?
        do { cluster = try configuration.makeCluster?(manager) } catch {
            manager.shutdown()
            throw error
        }
        let app = makeApplication(
            manager: manager, configuration: configuration, registry: registry, logger: logger, cluster: cluster,
            iceTCP: media.iceTCP)
        let services = ServerServices(
            cluster: cluster, webhooks: configuration.webhooks, media: media, manager: manager, srt: srt, rtmp: rtmp,
            tls: configuration.tls, app: app, logger: logger)
        let group = ServiceGroup(
            configuration: .init(
                services: services.list, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}
