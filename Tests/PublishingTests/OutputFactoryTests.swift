import Logging
import Testing
@testable import Publishing

@Suite("Output URLs and backoff")
struct OutputFactoryTests {
    let logger = Logger(label: "test.publishing")

    @Test("rtmp:// makes an RTMPPublisher and file:// a FileOutput, both idle until started")
    func schemes() throws {
        let rtmp = try makeOutput(id: "a", url: "rtmp://127.0.0.1:1935/live/key", logger: logger) { _, _ in }
        #expect(rtmp is RTMPPublisher)
        #expect(rtmp.state == .disconnected)
        let file = try makeOutput(id: "b", url: "file:///tmp/cohost%20test.flv", logger: logger) { _, _ in }
        #expect((file as? FileOutput)?.path == "/tmp/cohost test.flv")
        #expect(file.state == .disconnected)
    }

    @Test("rtmps:// is refused with an explanation about this librtmp build")
    func rtmps() {
        #expect(throws: OutputError.tlsNotSupported(url: "rtmps://example.com/live/key")) {
            try makeOutput(id: "a", url: "rtmps://example.com/live/key", logger: logger) { _, _ in }
        }
        #expect(OutputError.tlsNotSupported(url: "rtmps://h/app/k").description.contains("not supported by this librtmp build"))
    }

    @Test("other schemes, missing parts and relative paths are refused")
    func refusals() {
        #expect(throws: OutputError.unsupportedScheme(url: "http://example.com/live")) {
            try makeOutput(id: "a", url: "http://example.com/live", logger: logger) { _, _ in }
        }
        #expect(throws: OutputError.unsupportedScheme(url: "example.com/live/key")) {
            try makeOutput(id: "a", url: "example.com/live/key", logger: logger) { _, _ in }
        }
        #expect(throws: OutputError.invalidURL(url: "rtmp://example.com/live",
                                               reason: "needs an application and a stream name (rtmp://host/app/stream)")) {
            try makeOutput(id: "a", url: "rtmp://example.com/live", logger: logger) { _, _ in }
        }
        #expect(throws: OutputError.invalidURL(url: "file://relative.flv",
                                               reason: "a file URL needs an absolute path (file:///dir/name.flv)")) {
            try makeOutput(id: "a", url: "file://relative.flv", logger: logger) { _, _ in }
        }
    }

    @Test("stream keys are cut from URLs in messages")
    func redaction() {
        #expect(redactedURL("rtmp://a.example/live/secretkey123") == "rtmp://a.example/live/se…")
        #expect(OutputError.unsupportedScheme(url: "http://x/y").description.hasPrefix("unsupported output URL http://x/y"))
    }

    @Test("backoff windows grow 0–2, 2–4, 4–6, then stay at 6–10 seconds")
    func backoffWindows() {
        #expect(ReconnectBackoff.range(forAttempt: 1) == 0...2)
        #expect(ReconnectBackoff.range(forAttempt: 2) == 2...4)
        #expect(ReconnectBackoff.range(forAttempt: 3) == 4...6)
        #expect(ReconnectBackoff.range(forAttempt: 4) == 6...10)
        #expect(ReconnectBackoff.range(forAttempt: 50) == 6...10)
        for attempt in 1...5 {
            let delays = (0..<200).map { _ in ReconnectBackoff.delay(forAttempt: attempt) }
            #expect(delays.allSatisfy { ReconnectBackoff.range(forAttempt: attempt).contains($0) })
            #expect(Set(delays).count > 100)  // randomised, not a fixed step
        }
    }
}
