import HTTPTypes
import NIOCore
import NIOHTTPTypes
import Synchronization

/// Deadlines for receiving a request, so that a client sending a request a byte at a time (slowloris) cannot hold a
/// connection: from the first byte of a request to its complete head at most `head`, from the head to the end of
/// its body at most `body`. Between requests the idle timeout rules. Two handlers share the work: `Timer` sees the
/// connection's bytes (it is first in the pipeline, before TLS) and `Progress` sees the decoded request parts
/// (Hummingbird's additional HTTP handlers) and tells `Timer` through outbound user events. A connection past a
/// deadline is closed and counted (`cohost_http_requests_timed_out`).
public final class RequestDeadlines: Sendable {
    public let head: TimeAmount
    public let body: TimeAmount
    private let timedOutCount = Atomic<Int>(0)

    public init(head: TimeAmount = .seconds(10), body: TimeAmount = .seconds(60)) {
        self.head = head
        self.body = body
    }

    var timedOut: Int { timedOutCount.load(ordering: .relaxed) }

    /// What `Progress` tells `Timer`.
    enum Event: Sendable {
        case headReceived
        case requestEnded
        /// The connection left HTTP (a WebSocket upgrade): no more deadlines.
        case leftHTTP
    }

    /// The byte-level half; confined to its channel's event loop.
    final class Timer: ChannelDuplexHandler, RemovableChannelHandler {
        typealias InboundIn = NIOAny
        typealias OutboundIn = NIOAny

        private enum Phase { case idle, head, body, off }
        private let deadlines: RequestDeadlines
        private var phase = Phase.idle
        private var scheduled: Scheduled<Void>?

        init(deadlines: RequestDeadlines) { self.deadlines = deadlines }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            if phase == .idle {
                phase = .head
                arm(context, deadlines.head)
            }
            context.fireChannelRead(data)
        }

        func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
            guard let event = event as? Event else {
                return context.triggerUserOutboundEvent(event, promise: promise)
            }
            switch event {
            case .headReceived:
                phase = .body
                arm(context, deadlines.body)
            case .requestEnded:
                phase = .idle
                disarm()
            case .leftHTTP:
                phase = .off
                disarm()
            }
            promise?.succeed(())
        }

        func channelInactive(context: ChannelHandlerContext) {
            disarm()
            context.fireChannelInactive()
        }

        func handlerRemoved(context: ChannelHandlerContext) { disarm() }

        private func arm(_ context: ChannelHandlerContext, _ delay: TimeAmount) {
            disarm()
            let deadlines = deadlines
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            scheduled = context.eventLoop.scheduleTask(in: delay) {
                deadlines.timedOutCount.wrappingAdd(1, ordering: .relaxed)
                loopBound.value.close(promise: nil)
            }
        }

        private func disarm() {
            scheduled?.cancel()
            scheduled = nil
        }
    }

    /// The request-part half: placed after HTTP decoding, it reports each head and each end to `Timer`.
    final class Progress: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPRequestPart
        typealias InboundOut = HTTPRequestPart

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head: context.triggerUserOutboundEvent(Event.headReceived, promise: nil)
            case .end: context.triggerUserOutboundEvent(Event.requestEnded, promise: nil)
            case .body: break
            }
            context.fireChannelRead(data)
        }

        func handlerRemoved(context: ChannelHandlerContext) {
            // Removed with the HTTP handlers when the connection becomes a WebSocket.
            context.triggerUserOutboundEvent(Event.leftHTTP, promise: nil)
        }
    }
}
