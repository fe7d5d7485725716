import Foundation
import Logging
import Rooms
import ServiceLifecycle
import MediaSources

/// Everything `cohost serve` runs that has a lifetime, in the order it starts. The group stops them in the reverse
/// order, each once the one after it in this list has finished:
/// 1. the HTTP API: no request starts a change while the rest stops;
/// 2. the TLS certificate reloader (SIGHUP);
/// 3. the sweep (participant timeouts, idle rooms) and 4. the WebRTC transport ticker: nothing more times out;
/// 5. the rooms: everyone leaves, outputs flush and close, the last events are published;
/// 6. the media endpoint: stops receiving (its socket stays open for what closing rooms still send);
/// 7. the webhook dispatcher: delivers the rooms' last events, 5 s at most;
/// 8. the cluster heartbeat, last: peers see this node alive until its rooms are closed, so none takes them over
///    while they are still here.
struct ServerServices {
    var cluster: (any ClusterView)?
    var webhooks: WebhookDispatcher?
    var media: MediaEndpoint
    var manager: RoomManager
    /// The SRT and RTMP ports encoders push to: they stop taking pushes before the rooms close.
    var srt: SRTListener?
    var rtmp: RTMPListener?
    var tls: TLSIdentity?
    var app: any Service
    var logger: Logger

    /// Start order; the group stops them last first.
    var list: [any Service] {
        var services: [any Service] = []
        if let cluster {
            services.append(ShutdownStep("cluster", logger: logger) { cluster.stop() })
        }
        if let webhooks {
            services.append(
                ShutdownStep("webhooks", logger: logger) { [logger] in
                    if !(await webhooks.drain(timeout: 5)) {
                        logger.warning("webhook deliveries still pending at exit were dropped")
                    }
                    webhooks.stop()
                })
        }
        services.append(media)
        services.append(
            ShutdownStep("rooms", logger: logger) { [manager] in
                // Outputs may each take seconds to close on a stuck connection: off the cooperative threads.
                _ = try? await offload { manager.shutdown() }
            })
        if let srt {
            services.append(ShutdownStep("srt", logger: logger) { srt.stop() })
        }
        if let rtmp {
            services.append(ShutdownStep("rtmp", logger: logger) { rtmp.stop() })
        }
        if manager.settings.webRTC != nil {
            services.append(
                PeriodicService("transports", every: 0.05, queue: "cohost.transports", logger: logger) {
                    [media = manager.media] now in media.tickTransports(nowMs: now)
                })
        }
        services.append(
            PeriodicService("sweep", every: 1, queue: "cohost.timeouts", logger: logger) { [weak manager] now in
                manager?.sweep(nowMs: now)
            })
        if let tls {
            services.append(TLSReloader(identity: tls, logger: logger))
        }
        services.append(app)
        return services
    }
}

/// Rereads the HTTPS certificate and key on SIGHUP until shutdown.
struct TLSReloader: Service, CustomStringConvertible {
    let identity: TLSIdentity
    let logger: Logger
    var description: String { "tls-reload" }

    func run() async throws {
        let source = identity.reloadOnHangup(logger: logger)
        try? await gracefulShutdown()
        source.cancel()
        logger.info("service stopped", metadata: ["service": "\(description)"])
    }
}
