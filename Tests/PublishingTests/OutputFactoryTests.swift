import Logging
import Testing
@testable import Publishing

@Suite("Output URLs")
struct OutputFactoryTests {
    let logger = Logger(label: "test.publishing")

    @Test("rtmp:// makes an StreamPublisher and file:// a FileOutput, both idle until started")
    func schemes() throws {
        let rtmp = try makeOutput(id: "a", url: "rtmp://rtmp.example:1935/live/key", logger: logger) { _ in }
        #expect(rtmp is StreamPublisher)
        #expect(rtmp.state == .disconnected)
        let file = try makeOutput(id: "b", url: "file:///tmp/cohost%20test.flv", logger: logger) { _ in }
        #expect((file as? FileOutput)?.path == "/tmp/cohost test.flv")
        #expect(file.state == .disconnected)
    }

    @Test("rtmps:// makes an StreamPublisher too (TLS through librtmp), with the same URL checks")
    func rtmps() throws {
        let output = try makeOutput(id: "a", url: "rtmps://example.com:443/live/key", logger: logger) { _ in }
        #expect(output is StreamPublisher)
        #expect(output.state == .disconnected)
        #expect(
            throws: OutputError.invalidURL(
                url: "rtmps://example.com/live",
                reason: "needs an application and a stream name (rtmp://host/app/stream)")
        ) {
            try makeOutput(id: "a", url: "rtmps://example.com/live", logger: logger) { _ in }
        }
    }

    @Test("other schemes, missing parts and relative paths are refused")
    func refusals() {
        #expect(throws: OutputError.unsupportedScheme(url: "http://example.com/live")) {
            try makeOutput(id: "a", url: "http://example.com/live", logger: logger) { _ in }
        }
        #expect(throws: OutputError.unsupportedScheme(url: "example.com/live/key")) {
            try makeOutput(id: "a", url: "example.com/live/key", logger: logger) { _ in }
        }
        #expect(
            throws: OutputError.invalidURL(
                url: "rtmp://example.com/live",
                reason: "needs an application and a stream name (rtmp://host/app/stream)")
        ) {
            try makeOutput(id: "a", url: "rtmp://example.com/live", logger: logger) { _ in }
        }
        #expect(
            throws: OutputError.invalidURL(
                url: "file://relative.flv",
                reason: "a file URL needs an absolute path (file:///dir/name.flv)")
        ) {
            try makeOutput(id: "a", url: "file://relative.flv", logger: logger) { _ in }
        }
    }

    @Test("options outside their ranges are refused before anything starts, naming the field")
    func optionRefusals() {
        #expect(
            throws: OutputError.invalidOptions(
                OutputOptionsError(field: "queueMs", message: "queueMs must be within 100...10000, got 50"))
        ) {
            try makeOutput(
                id: "a", url: "rtmp://127.0.0.1/live/k", options: OutputOptions(queueLimitMs: 50), logger: logger
            ) { _ in }
        }
    }

    @Test("the application is everything between the host and the stream name")
    func applicationNames() {
        #expect(OutputURL.rtmpApplication("rtmp://h:1935/live/key") == "live")
        #expect(OutputURL.rtmpApplication("rtmp://h/app/instance/key") == "app/instance")
        #expect(OutputURL.rtmpApplication("rtmp://h/key") == "")
        #expect(OutputURL.rtmpApplication("rtmp://h/\u{301}app/key") == "\u{301}app")
        #expect(OutputURL.rtmpProblem("rtmp://h/app/\u{301}key") == nil)
    }

    @Test("stream keys are cut from URLs in messages")
    func redaction() {
        #expect(redactedURL("rtmp://a.example/live/secretkey123") == "rtmp://a.example/live/se…")
        #expect(
            OutputError.unsupportedScheme(url: "http://x/y").description.hasPrefix("unsupported output URL http://x/y"))
    }
}
