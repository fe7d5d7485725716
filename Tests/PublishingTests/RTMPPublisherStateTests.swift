import Foundation
import Logging
import Testing
import TestSupport
@testable import Publishing

@Suite("RTMP publisher states without a server")
struct RTMPPublisherStateTests {
    let logger = Logger(label: "test.publishing")

    @Test("a URL that is not rtmp:// is an immediate error, reported again on start")
    func notRTMP() {
        let recorder = StateRecorder()
        let publisher = RTMPPublisher(id: "x", url: "http://127.0.0.1/live/x", logger: logger, onStateChange: recorder.handler)
        #expect(publisher.state == .error)
        #expect(publisher.lastMessage == "cannot publish to http://127.0.0.1/live/x: not an rtmp:// URL")
        publisher.start(headers: [])
        publisher.send(FLVMuxer.audioTag(aac: [0x21], timestampMs: 0))
        publisher.stop()
        #expect(recorder.states == [.error])
        #expect(publisher.state == .error)
        #expect(publisher.stats.queuedTags == 0)
    }

    @Test("an unreachable port goes reconnecting with the connect error, and stop ends it promptly")
    func unreachable() throws {
        let port = try FreePort.tcp()  // nothing listens there
        let recorder = StateRecorder()
        let publisher = RTMPPublisher(id: "y", url: "rtmp://127.0.0.1:\(port)/live/y", logger: logger,
                                      onStateChange: recorder.handler)
        publisher.start(headers: [FLVMuxer.aacSequenceHeader([0x11, 0x90])])
        #expect(StateRecorder.wait(timeout: 3) { publisher.state == .reconnecting })
        #expect(publisher.stats.reconnects >= 1)
        #expect(recorder.messages.first == "cannot connect to 127.0.0.1:\(port): Connection refused")
        let began = Date()
        publisher.stop()
        #expect(Date().timeIntervalSince(began) < 1)
        #expect(publisher.state == .disconnected)
        #expect(Array(recorder.states.prefix(2)) == [.connecting, .reconnecting])
        #expect(Array(recorder.states.suffix(2)) == [.disconnecting, .disconnected])
        #expect(publisher.stats.sentTags == 0)
    }
}
