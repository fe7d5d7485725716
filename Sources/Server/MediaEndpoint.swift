import Foundation
import NIOCore
import NIOPosix
import Rooms
import Logging
import ServiceLifecycle

/// The UDP side: one media port for every participant (RTP and multiplexed RTCP) and the port
/// above it for senders that keep RTCP apart. Datagrams go straight to `RoomManager.ingest`;
/// this layer only converts NIO types into bytes and an address.
public final class MediaEndpoint: Service, @unchecked Sendable {
    private let manager: RoomManager
    private let host: String
    private let port: Int
    private let group: MultiThreadedEventLoopGroup
    private let logger: Logger
    private var channels: [any Channel] = []

    public init(manager: RoomManager, host: String, port: Int, logger: Logger) {
        self.manager = manager
        self.host = host
        self.port = port
        self.logger = logger
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    }

    /// Binds both ports; throws when either is taken.
    public func bind() async throws {
        for p in [port, port + 1] {
            let handler = DatagramHandler(manager: manager)
            let channel = try await DatagramBootstrap(group: group)
                .channelOption(.socketOption(.so_reuseaddr), value: 1)
                .channelOption(.socketOption(.so_rcvbuf), value: 4 << 20)
                // recvmmsg: up to 16 datagrams per system call (the kernel was 13 % of a voice room's CPU,
                // one recvmsg per 20 ms packet). NIO splits the buffer evenly between the messages, so it is
                // a fixed 16 × 2 KB: every datagram up to 2048 bytes arrives whole (RTP stays under the MTU).
                .channelOption(.datagramVectorReadMessageCount, value: 16)
                .channelOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: 16 * 2048))
                .channelInitializer { $0.pipeline.addHandler(handler) }
                .bind(host: host, port: p).get()
            channels.append(channel)
        }
        // RTCP feedback leaves from the media port, where rtcp-mux peers expect it.
        if let media = channels.first {
            manager.attachTransport { bytes, peer in
                guard let address = try? SocketAddress(ipAddress: peer.host, port: peer.port) else { return }
                media.writeAndFlush(AddressedEnvelope(remoteAddress: address, data: ByteBuffer(bytes: bytes)), promise: nil)
            }
        }
        logger.info("media endpoint listening", metadata: ["udp": "\(host):\(port) (RTCP also :\(port + 1))"])
    }

    public func run() async throws {
        if channels.isEmpty { try await bind() }
        // Runs until graceful shutdown, then closes the sockets.
        try? await gracefulShutdown()
        for channel in channels { try? await channel.close() }
        try? await group.shutdownGracefully()
    }
}

private final class DatagramHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>
    let manager: RoomManager

    init(manager: RoomManager) { self.manager = manager }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = Self.unwrapInboundIn(data)
        // Bounded by the datagram size; one copy into the array the parsers take.
        let bytes = Array(envelope.data.readableBytesView)
        let peer = PeerAddress(host: envelope.remoteAddress.ipAddress ?? "?", port: envelope.remoteAddress.port ?? 0)
        manager.ingest(bytes, from: peer)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // ICMP port-unreachable and friends surface here; a UDP socket keeps working.
    }
}
