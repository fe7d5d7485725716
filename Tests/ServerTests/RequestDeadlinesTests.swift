import HTTPTypes
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import Testing

@testable import Server

/// The request deadlines on an embedded channel with its own clock: a head that never completes, a body that never
/// ends, a request that does, and a connection that became a WebSocket.
@Suite struct RequestDeadlinesTests {
    /// Stands in for the HTTP decoder: "H" is a head, "E" the end of a request, anything else body bytes.
    final class Decoder: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias InboundOut = HTTPRequestPart

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var buffer = unwrapInboundIn(data)
            let text = buffer.readString(length: buffer.readableBytes) ?? ""
            let part: HTTPRequestPart
            switch text {
            case "H": part = .head(HTTPRequest(method: .post, scheme: nil, authority: "x", path: "/"))
            case "E": part = .end(nil)
            default: part = .body(ByteBuffer(string: text))
            }
            context.fireChannelRead(wrapInboundOut(part))
        }
    }

    func channel(_ deadlines: RequestDeadlines) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandlers([
            RequestDeadlines.Timer(deadlines: deadlines), Decoder(), RequestDeadlines.Progress(),
        ])
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return channel
    }

    func send(_ channel: EmbeddedChannel, _ text: String) throws {
        try channel.writeInbound(ByteBuffer(string: text))
        while let _: HTTPRequestPart = try channel.readInbound() {}
    }

    @Test func aHeadThatNeverCompletesIsCutOffAtItsDeadline() throws {
        let deadlines = RequestDeadlines(head: .seconds(10), body: .seconds(60))
        let channel = try channel(deadlines)
        channel.embeddedEventLoop.advanceTime(by: .seconds(100))
        #expect(channel.isActive, "a silent connection is the idle timeout's, not a deadline's")
        try send(channel, "GET / HT")
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(9_900))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(200))
        #expect(!channel.isActive)
        #expect(deadlines.timedOut == 1)
    }

    @Test func theBodyHasItsOwnDeadlineAndAFinishedRequestNone() throws {
        let deadlines = RequestDeadlines(head: .seconds(10), body: .seconds(60))
        let finished = try channel(deadlines)
        try send(finished, "H")
        try send(finished, "E")
        finished.embeddedEventLoop.advanceTime(by: .seconds(120))
        #expect(finished.isActive)
        let slow = try channel(deadlines)
        try send(slow, "H")
        slow.embeddedEventLoop.advanceTime(by: .seconds(30))
        try send(slow, "part of a body")
        #expect(slow.isActive, "past the head's deadline, within the body's")
        slow.embeddedEventLoop.advanceTime(by: .seconds(31))
        #expect(!slow.isActive)
        #expect(deadlines.timedOut == 1)
        _ = try finished.finish()
    }

    @Test func aConnectionThatLeftHTTPHasNoDeadlines() throws {
        let deadlines = RequestDeadlines(head: .seconds(10), body: .seconds(60))
        let channel = try channel(deadlines)
        try send(channel, "H")
        channel.pipeline.triggerUserOutboundEvent(RequestDeadlines.Event.leftHTTP, promise: nil)
        try send(channel, "websocket frames")
        channel.embeddedEventLoop.advanceTime(by: .seconds(600))
        #expect(channel.isActive)
        #expect(deadlines.timedOut == 0)
        _ = try channel.finish()
    }
}
