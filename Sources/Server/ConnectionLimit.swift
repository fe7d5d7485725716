import HummingbirdCore
import Logging
import NIOCore
import Synchronization

/// Caps the HTTP connections open at once (event WebSockets included): one accepted beyond `limit` is closed before
/// any of its bytes is read, and counted (`cohost_http_connections_refused`).
public final class ConnectionLimit: Sendable {
    public let limit: Int
    private let open = Atomic<Int>(0)
    private let refused = Atomic<Int>(0)

    public init(limit: Int) { self.limit = limit }

    var openConnections: Int { open.load(ordering: .relaxed) }
    var refusedConnections: Int { refused.load(ordering: .relaxed) }

    /// `inner`'s connections, each counted from its first handler on.
    func wrapping<Inner: ServerChildChannel>(_ inner: Inner) -> some ServerChildChannel {
        Limited(inner: inner, limit: self)
    }

    private struct Limited<Inner: ServerChildChannel>: ServerChildChannel {
        let inner: Inner
        let limit: ConnectionLimit

        func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Inner.Value> {
            do { try channel.pipeline.syncOperations.addHandler(Counter(limit: limit), position: .first) } catch {
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
            guard limit.open.wrappingAdd(1, ordering: .relaxed).newValue > limit.limit else { return true }
            limit.refused.wrappingAdd(1, ordering: .relaxed)
            context.close(promise: nil)
            return false
        }

        private func release() {
            guard counted else { return }
            counted = false
            limit.open.wrappingSubtract(1, ordering: .relaxed)
        }
    }
}
