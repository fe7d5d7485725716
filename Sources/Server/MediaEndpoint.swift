import Foundation
import Rooms
import Logging
import ServiceLifecycle

/// The UDP side: one media port for every participant (RTP and multiplexed RTCP) and the port
/// above it for senders that keep RTCP apart. Both sockets are read by one `DatagramReceiver` thread,
/// whose datagrams go straight to `MediaDemux.ingest`; RTCP feedback leaves from the media port.
public final class MediaEndpoint: Service, @unchecked Sendable {
    private let manager: RoomManager
    private let host: String
    private let port: Int
    private let tcpPort: Int?
    private let logger: Logger
    private var receiver: DatagramReceiver?
    /// The ICE-TCP listener once bound (nil when ICE-TCP is off).
    public private(set) var iceTCP: ICETCPListener?

    /// `tcpPort`: ICE-TCP's port (nil: none).
    public init(manager: RoomManager, host: String, port: Int, tcpPort: Int? = nil, logger: Logger) {
        self.manager = manager
        self.host = host
        self.port = port
        self.tcpPort = tcpPort
        self.logger = logger
    }

    /// Binds both ports and starts receiving; throws when either is taken.
    public func bind() async throws {
        let media = try UDPSocket(host: host, port: port)
        let rtcp = try UDPSocket(host: host, port: port + 1)
        let streams = try tcpPort.map { try ICETCPListener(host: host, port: $0, logger: logger) }
        let receiver = try DatagramReceiver(
            sockets: [media, rtcp], streams: streams, sink: IngestSink(demux: manager.media), logger: logger)
        receiver.start()
        self.receiver = receiver
        iceTCP = streams
        // rtcp-mux peers expect feedback from the port they send to.
        manager.media.attach { bytes, peer in
            if peer.isStream { streams?.send(bytes, to: peer) } else { media.send(bytes, to: peer) }
        }
        var listening = ["udp": Logger.MetadataValue.string("\(host):\(port) (RTCP also :\(port + 1))")]
        if let streams { listening["ice_tcp"] = "\(host):\(streams.localPort)" }
        logger.info("media endpoint listening", metadata: listening)
    }

    public func run() async throws {
        if receiver == nil { try await bind() }
        // Receives until graceful shutdown. The sockets stay open after it (closing rooms may still send
        // RTCP) and close with the process.
        try? await gracefulShutdown()
        receiver?.stop()
        logger.info("service stopped", metadata: ["service": "media"])
    }
}

/// Hands datagrams to the room manager with the parse/SRTP buffers it reuses. Confined to the receive
/// thread, which is what makes the reused scratch safe under `@unchecked Sendable`.
private final class IngestSink: DatagramSink, @unchecked Sendable {
    let demux: MediaDemux
    private var scratch = DatagramScratch()

    init(demux: MediaDemux) { self.demux = demux }

    func receive(_ bytes: [UInt8], from peer: PeerAddress) {
        demux.ingest(bytes, from: peer, scratch: &scratch)
    }

    func dropMalformed() { demux.countMalformed() }
}
