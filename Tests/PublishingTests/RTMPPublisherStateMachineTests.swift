import Foundation
import Logging
import Testing
@testable import Publishing

/// The reconnect state machine on a scripted environment: exact states, attempt numbers and waits.
@Suite("RTMP publisher state machine")
struct StreamPublisherStateMachineTests {
    let logger = Logger(label: "test.publishing")
    static let header = FLVMuxer.aacSequenceHeader([0x11, 0x90])
    static let refusedTCP = "cannot connect to 127.0.0.1:1935: Connection refused"

    private func audio(_ ms: UInt32) -> FLVTag { FLVMuxer.audioTag(aac: [0x21, 0x10, 0x04], timestampMs: ms) }
    private func video(_ ms: UInt32, key: Bool) -> FLVTag {
        FLVMuxer.videoTag(
            avcc: [0x00, 0x00, 0x00, 0x01, key ? 0x65 : 0x41], isKeyframe: key, timestampMs: ms, compositionTimeMs: 0)
    }

    private func publisher(
        _ environment: ScriptedEnvironment, options: OutputOptions = OutputOptions(),
        recorder: StateRecorder, keyframes: KeyframeRequestCounter = KeyframeRequestCounter()
    ) -> StreamPublisher {
        StreamPublisher(
            id: "s", url: "rtmp://127.0.0.1/live/s", options: options, logger: logger, environment: environment,
            random: { 0.5 }, onKeyframeNeeded: keyframes.handler, onStateChange: recorder.handler)
    }

    private func change(_ state: OutputState, _ attempt: Int, _ message: String? = nil) -> OutputStateChange {
        OutputStateChange(state: state, attempt: attempt, message: message)
    }

    @Test("a server that stays down is retried forever with growing waits and counted attempts")
    func retriesForever() {
        let environment = ScriptedEnvironment(Array(repeating: .fail(Self.refusedTCP), count: 5))
        let recorder = StateRecorder()
        let output = publisher(environment, recorder: recorder)
        output.start(headers: [Self.header])
        #expect(StateRecorder.wait(timeout: 5) { recorder.changes.count == 6 })
        output.stop()
        let retrying = (1...5).map { change(.reconnecting, $0, Self.refusedTCP) }
        #expect(
            recorder.changes == [change(.connecting, 0)] + retrying + [
                change(.disconnecting, 5), change(.disconnected, 5),
            ])
        // Midpoints (random 0.5) of 0–2, 2–4, 4–6, 6–10, 6–10 s; the fifth is the wait stop cut short.
        #expect(environment.waits == [1, 3, 5, 8, 8])
        #expect(output.stats.reconnects == 5)
    }

    @Test("maxRetries 2: the third failure is a final error that says it gave up")
    func givesUpAfterMaxRetries() {
        let environment = ScriptedEnvironment(Array(repeating: .fail(Self.refusedTCP), count: 3))
        let recorder = StateRecorder()
        let output = publisher(environment, options: OutputOptions(maxRetries: 2), recorder: recorder)
        output.start(headers: [Self.header])
        #expect(StateRecorder.wait(timeout: 5) { output.state == .error })
        output.stop()
        #expect(
            recorder.changes == [
                change(.connecting, 0), change(.reconnecting, 1, Self.refusedTCP),
                change(.reconnecting, 2, Self.refusedTCP),
                change(.error, 2, "gave up after 2 retries (maxRetries 2): \(Self.refusedTCP)"),
            ])
        #expect(environment.waits == [1, 3])
        #expect(environment.connects == 3)
    }

    @Test("maxRetries 0: the first failure is final")
    func maxRetriesZero() {
        let environment = ScriptedEnvironment([.fail(Self.refusedTCP)])
        let recorder = StateRecorder()
        let output = publisher(environment, options: OutputOptions(maxRetries: 0), recorder: recorder)
        output.start(headers: [Self.header])
        #expect(StateRecorder.wait(timeout: 5) { output.state == .error })
        output.stop()
        #expect(
            recorder.changes == [
                change(.connecting, 0), change(.error, 0, "not retrying (maxRetries is 0): \(Self.refusedTCP)"),
            ])
        #expect(environment.waits.isEmpty)
    }

    @Test("an application the server refuses twice in a row is a final error, without backoff")
    func refusedApplicationIsFinal() {
        let refusal =
            "127.0.0.1:1935 refused the RTMP connect to application 'nope' (no such application on the server?); check the URL"
        let environment = ScriptedEnvironment([.refuse(refusal), .refuse(refusal)])
        let recorder = StateRecorder()
        let output = publisher(environment, recorder: recorder)
        output.start(headers: [Self.header])
        #expect(StateRecorder.wait(timeout: 5) { output.state == .error })
        output.stop()
        #expect(recorder.changes == [change(.connecting, 0), change(.error, 0, refusal)])
        #expect(environment.connects == 2)
        #expect(environment.waits.isEmpty)
        #expect(output.stats.reconnects == 0)
    }

    @Test("a single refusal (a server dying mid-handshake) is confirmed at once and then forgotten")
    func singleRefusalIsRetried() {
        let environment = ScriptedEnvironment([.refuse("refused"), .accept(writes: nil, secondsPerWrite: 0)])
        let recorder = StateRecorder()
        let output = publisher(environment, recorder: recorder)
        output.start(headers: [Self.header])
        #expect(StateRecorder.wait(timeout: 5) { output.state == .connected })
        output.stop()
        #expect(
            recorder.changes == [
                change(.connecting, 0), change(.connected, 0), change(.disconnecting, 0), change(.disconnected, 0),
            ])
        #expect(environment.waits.isEmpty)
    }

    @Test("a connection that lasted 5 s resets the retry count and the backoff; a short one does not")
    func stableConnectionResetsRetries() {
        let environment = ScriptedEnvironment([
            .fail(Self.refusedTCP),
            .accept(writes: 2, secondsPerWrite: 0.1),  // header + 1 tag, 0.1 s: not stable
            .fail(Self.refusedTCP),
            .accept(writes: 3, secondsPerWrite: 3),  // header + 2 tags, 6 s after connecting: stable
        ])
        let recorder = StateRecorder()
        let keyframes = KeyframeRequestCounter()
        let output = publisher(environment, recorder: recorder, keyframes: keyframes)
        for i in 0..<20 { output.send(audio(UInt32(i * 21))) }
        output.start(headers: [Self.header])
        #expect(StateRecorder.wait(timeout: 5) { recorder.changes.count == 7 })
        output.stop()
        let reset = "connection reset by peer"
        #expect(
            recorder.changes == [
                change(.connecting, 0), change(.reconnecting, 1, Self.refusedTCP), change(.connected, 1),
                change(.reconnecting, 2, reset), change(.reconnecting, 3, Self.refusedTCP), change(.connected, 3),
                change(.reconnecting, 1, reset), change(.disconnecting, 1), change(.disconnected, 1),
            ])
        #expect(environment.waits == [1, 3, 5, 1])
        // The tag being written when a connection broke is lost with it (A21 and A84).
        #expect(environment.written.map { $0.map(\.timestampMs) } == [[0, 0], [0, 42, 63]])
        #expect(environment.written.map { $0.first?.isSequenceHeader } == [true, true])
        #expect(keyframes.count == 2)
        #expect(output.stats.reconnects == 4)
    }

    @Test("after a reconnect, dependent video is skipped until the next keyframe and a keyframe is requested")
    func reconnectWaitsForKeyframe() {
        let environment = ScriptedEnvironment([
            .accept(writes: 2, secondsPerWrite: 0), .accept(writes: nil, secondsPerWrite: 0),
        ])
        let recorder = StateRecorder()
        let keyframes = KeyframeRequestCounter()
        let output = publisher(environment, recorder: recorder, keyframes: keyframes)
        for tag in [
            video(0, key: true), video(40, key: false), video(80, key: false), video(120, key: false),
            video(160, key: true), video(200, key: false),
        ] { output.send(tag) }
        output.start(headers: [Self.header])
        #expect(StateRecorder.wait(timeout: 5) { environment.written.count == 2 && environment.written[1].count == 3 })
        output.stop()
        // Connection 1: header, K0, then P40 breaks it. Connection 2: header, P80 and P120 skipped, K160, P200.
        #expect(environment.written.map { $0.map(\.timestampMs) } == [[0, 0], [0, 160, 200]])
        #expect(environment.written.last?.dropFirst().map(\.isKeyframe) == [true, false])
        #expect(output.stats.skippedVideoTags == 2 && output.stats.droppedVideoTags == 0)
        #expect(output.stats.sentVideoFrames == 3)
        #expect(keyframes.count == 2)
        #expect(recorder.changes.map(\.attempt) == [0, 0, 1, 1, 1, 1])
    }
}
