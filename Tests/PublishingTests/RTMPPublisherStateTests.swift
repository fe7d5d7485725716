import Foundation
import Logging
import Testing
import TestSupport
@testable import Publishing

@Suite("RTMP publisher states without a server")
struct StreamPublisherStateTests {
    let logger = Logger(label: "test.publishing")

    @Test("a URL that is not rtmp:// is an immediate error, reported again on start")
    func notRTMP() {
        let recorder = StateRecorder()
        let publisher = StreamPublisher(
            id: "x", url: "http://127.0.0.1/live/x", logger: logger, onStateChange: recorder.handler)
        #expect(publisher.state == .error)
        #expect(publisher.lastMessage == "cannot publish to http://127.0.0.1/live/x: not an rtmp:// or rtmps:// URL")
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
        let publisher = StreamPublisher(
            id: "y", url: "rtmp://127.0.0.1:\(port)/live/y", logger: logger,
            onStateChange: recorder.handler)
        publisher.start(headers: [FLVMuxer.aacSequenceHeader([0x11, 0x90])])
        #expect(StateRecorder.wait(timeout: 3) { publisher.state == .reconnecting })
        #expect(publisher.stats.reconnects >= 1)
        // No allow-list names the host: why the connection failed is not told (it would map the network).
        #expect(
            recorder.changes.dropFirst().first
                == OutputStateChange(state: .reconnecting, attempt: 1, message: "cannot connect to 127.0.0.1:\(port)"))
        let began = Date()
        publisher.stop()
        #expect(Date().timeIntervalSince(began) < 1)
        // A host the operator listed is trusted with the reason.
        let listed = StateRecorder()
        let trusted = StreamPublisher(
            id: "z", url: "rtmp://127.0.0.1:\(port)/live/z", logger: logger,
            destinations: try DestinationPolicy(allowing: ["127.0.0.1"]), onStateChange: listed.handler)
        trusted.start(headers: [FLVMuxer.aacSequenceHeader([0x11, 0x90])])
        #expect(StateRecorder.wait(timeout: 3) { trusted.state == .reconnecting })
        #expect(listed.changes.dropFirst().first?.message == "cannot connect to 127.0.0.1:\(port): Connection refused")
        trusted.stop()
        #expect(publisher.state == .disconnected)
        #expect(Array(recorder.states.prefix(2)) == [.connecting, .reconnecting])
        #expect(Array(recorder.states.suffix(2)) == [.disconnecting, .disconnected])
        #expect(publisher.stats.sentTags == 0)
    }

    @Test("refusals are read from onStatus and _error commands at level error, and nothing else")
    func refusalsFromCommands() {
        let badName = encodeAMF0([
            .string("onStatus"), .number(0), .null,
            .object([
                AMF0Property("level", .string("error")), AMF0Property("code", .string("NetStream.Publish.BadName")),
                AMF0Property("description", .string("Already publishing")),
            ]),
        ])
        #expect(RTMPSession.refusal(inCommand: badName) == "NetStream.Publish.BadName (Already publishing)")
        let rejected = encodeAMF0([
            .string("_error"), .number(1), .null,
            .object([
                AMF0Property("level", .string("error")),
                AMF0Property("code", .string("NetConnection.Connect.Rejected")),
            ]),
        ])
        #expect(RTMPSession.refusal(inCommand: rejected) == "NetConnection.Connect.Rejected")
        let started = encodeAMF0([
            .string("onStatus"), .number(0), .null,
            .object([
                AMF0Property("level", .string("status")), AMF0Property("code", .string("NetStream.Publish.Start")),
            ]),
        ])
        #expect(RTMPSession.refusal(inCommand: started) == nil)
        #expect(RTMPSession.refusal(inCommand: Array(badName.prefix(20))) == nil)
        #expect(RTMPSession.refusal(inCommand: []) == nil)
        // Server text is cut to 200 printable characters before it reaches logs and events.
        let noisy = encodeAMF0([
            .string("onStatus"), .number(0), .null,
            .object([
                AMF0Property("level", .string("error")), AMF0Property("code", .string("X.Y\r\n")),
                AMF0Property("description", .string("a\u{1B}b" + String(repeating: "z", count: 300))),
            ]),
        ])
        #expect(RTMPSession.refusal(inCommand: noisy) == "X.Y (ab" + String(repeating: "z", count: 198) + ")")
    }
}
