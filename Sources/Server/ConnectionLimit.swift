import HummingbirdCore
import Logging
import NIOCore
import Synchronization

/// Caps the HTTP connections open at once (event WebSockets included), in all and from one remote address, so that
/// one client cannot take every connection: one accepted beyond either cap is closed before any of its bytes is read,
/// and counted (`cohost_http_connections_refused`, `cohost_http_connections_refused_per_address`). Each connection
/// also gets the request deadlines (`RequestDeadlines`).
public final class ConnectionLimit: Sendable {
    public let limit: Int
    /// Connections from one address at once; 0: no cap but the total.
    public let perAddress: Int
    public let deadlines: RequestDeadlines
    private let open = Atomic<Int>(0)
    private let refused = Atomic<Int>(0)
    private let refusedPerAddress = Atomic<Int>(0)
    private let refusedReserve = Atomic<Int>(0)
    private let byAddress = Mutex<[String: Int]>([:])

    public init(limit: Int, perAddress: Int = 0, deadlines: RequestDeadlines = RequestDeadlines()) {
        self.limit = limit
        self.perAddress = perAddress
        self.deadlines = deadlines
    }

    var openConnections: Int { open.load(ordering: .relaxed) }
    var refusedConnections: Int { refused.load(ordering: .relaxed) }
    var refusedPerAddressConnections: Int { refusedPerAddress.load(ordering: .relaxed) }
    /// Requests without a token refused while the reserve was in use (`ConnectionReserve`).
    var refusedReserveRequests: Int { refusedReserve.load(ordering: .relaxed) }

    func noteReserveRefusal() { refusedReserve.wrappingAdd(1, ordering: .relaxed) }

    /// `inner`'s connections, each counted from its first handler on.
    func wrapping<Inner: ServerChildChannel>(_ inner: Inner) -> some ServerChildChannel {
        Limited(inner: inner, limit: self)
    }

    private struct Limited<Inner: ServerChildChannel>: ServerChildChannel {
        let inner: Inner
        let limit: ConnectionLimit

        func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Inner.Value> {
            do {
                try channel.pipeline.syncOperations.addHandler(
                    RequestDeadlines.Timer(deadlines: limit.deadlines), position: .first)
                try channel.pipeline.syncOperations.addHandler(Counter(limit: limit), position: .first)
            } catch {
                return channel.eventLoop.makeFailedFuture(error)
            }
            return inner.setup(channel: channel, logger: logger)
        }

        func handle(value: Inner.Value, logger: Logger) async { await inner.handle(value: value, logger: logger) }
    }

    /// One connection's place in the count; confined to its channel's event loop.
    private final class Counter: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = NIOAny
        private let limit: ConnectionLimit
        private var counted = false
        /// The remote address it is counted under, when the per-address cap applies.
        private var address: String?

        init(limit: ConnectionLimit) { self.limit = limit }

        func handlerAdded(context: ChannelHandlerContext) {
            if context.channel.isActive { _ = admit(context) }
        }

        func channelActive(context: ChannelHandlerContext) {
            if admit(context) { context.fireChannelActive() }
        }

        func channelInactive(context: ChannelHandlerContext) {
            release()
            context.fireChannelInactive()
        }

        func handlerRemoved(context: ChannelHandlerContext) { release() }

        /// False when the connection is one too many: it is being closed.
        private func admit(_ context: ChannelHandlerContext) -> Bool {
            guard !counted else { return true }
            counted = true
            // Counted in both from here on; `release` takes it out of both.
            if limit.open.wrappingAdd(1, ordering: .relaxed).newValue > limit.limit {
                limit.refused.wrappingAdd(1, ordering: .relaxed)
                context.close(promise: nil)
                return false
            }
            guard limit.perAddress > 0, let remote = context.channel.remoteAddress?.ipAddress else { return true }
            address = remote
            let count = limit.byAddress.withLock { counts in
                counts[remote, default: 0] += 1
                return counts[remote, default: 0]
            }
            guard count > limit.perAddress else { return true }
            limit.refusedPerAddress.wrappingAdd(1, ordering: .relaxed)
            context.close(promise: nil)
            return false
        }

        private func release() {
            guard counted else { return }
            counted = false
            limit.open.wrappingSubtract(1, ordering: .relaxed)
            guard let address else { return }
            self.address = nil
            limit.byAddress.withLock { counts in
                let left = counts[address, default: 1] - 1
                counts[address] = left > 0 ? left : nil
            }
        }
    }
}
