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

/// Confined to its channel's event loop (NIO calls a handler on one thread), which is what makes the
/// reused buffers below safe under `@unchecked Sendable`.
private final class DatagramHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>
    let manager: RoomManager
    /// The datagram's bytes, copied out of NIO's buffer into storage kept from one datagram to the next,
    /// and the parse/SRTP buffers `ingest` reuses: the packet path allocates nothing per datagram.
    private var bytes: [UInt8] = []
    private var scratch = DatagramScratch()

    init(manager: RoomManager) {
        self.manager = manager
        bytes.reserveCapacity(2048)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = Self.unwrapInboundIn(data)
        // Bounded by the datagram size (NIO's slices are 2 KB); copied in place while `bytes` is unique.
        bytes.removeAll(keepingCapacity: true)
        bytes.append(contentsOf: envelope.data.readableBytesView)
        manager.ingest(bytes, from: Self.peer(envelope.remoteAddress), scratch: &scratch)
    }

    /// The sender as a binary address: no address string formatted per datagram.
    static func peer(_ address: SocketAddress) -> PeerAddress {
        switch address {
        case .v4(let v4):
            return PeerAddress(ipv4: UInt32(bigEndian: v4.address.sin_addr.s_addr),
                               port: Int(UInt16(bigEndian: v4.address.sin_port)))
        case .v6(let v6):
            return PeerAddress(ipv6: v6.address.sin6_addr, port: Int(UInt16(bigEndian: v6.address.sin6_port)))
        case .unixDomainSocket:
            return PeerAddress(host: "?", port: 0)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // ICMP port-unreachable and friends surface here; a UDP socket keeps working.
    }
}
