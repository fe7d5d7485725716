import Foundation
import Logging

/// Publishes FLV tags to an RTMP server with librtmp, on its own thread.
///
/// `send` only enqueues (bounded, see `TagQueue`). The worker connects, writes the header tags, then
/// drains the queue. On a connect or write failure it goes `reconnecting`, waits a randomised, growing
/// backoff (`ReconnectBackoff`), reconnects, resends the headers and skips video until the next
/// keyframe, so the server always sees a decodable stream.
///
/// The worker thread keeps the publisher alive until `stop()`: always stop an output you started.
public final class RTMPPublisher: Output {
    /// A connection that lasted this long resets the backoff to its first step.
    static let stableConnectionSeconds = 5.0

    public let id: String
    public let url: String
    private let core: OutputCore

    /// A URL that is not a usable rtmp:// URL puts the publisher straight into the final `error` state.
    public init(id: String, url: String, logger: Logger, onStateChange: @escaping OutputStateHandler,
                queueLimitMs: Int = 2000) {
        self.id = id
        self.url = url
        var logger = logger
        logger[metadataKey: "output"] = "\(id)"
        if let problem = OutputURL.rtmpProblem(url) {
            let message = "cannot publish to \(redactedURL(url)): \(problem)"
            core = OutputCore(logger: logger, queueLimitMs: queueLimitMs, initialState: .error, message: message,
                              onStateChange: onStateChange)
        } else {
            core = OutputCore(logger: logger, queueLimitMs: queueLimitMs, initialState: .disconnected, message: nil,
                              onStateChange: onStateChange)
        }
    }

    public var state: OutputState { core.state }
    public var stats: OutputStats { core.stats }
    /// The text of the last error or reconnect reason, if any.
    public var lastMessage: String? { core.message }

    public func start(headers: [FLVTag]) {
        guard core.begin(headers: headers) else { return }
        core.transition(to: .connecting, message: nil)
        let thread = Thread { [self] in run() }
        thread.name = "rtmp-\(id)"
        thread.start()
    }

    public func send(_ tag: FLVTag) {
        core.enqueue(tag)
    }

    public func stop() {
        core.requestStopAndWait()
    }

    // MARK: worker thread

    private func run() {
        var failures = 0
        while !core.isStopRequested {
            var connectedAt: Date?
            do {
                try publishUntilStopped { connectedAt = Date() }
                core.finish(state: .disconnected, message: nil)
                return
            } catch {
                if core.isStopRequested { break }
                if let connectedAt, Date().timeIntervalSince(connectedAt) >= Self.stableConnectionSeconds { failures = 0 }
                failures += 1
                core.recordReconnect()
                core.transition(to: .reconnecting, message: error.description)
                let delay = ReconnectBackoff.delay(forAttempt: failures)
                core.logger.debug("reconnecting in \(String(format: "%.1f", delay)) s (attempt \(failures))")
                if !core.sleep(seconds: delay) { break }
            }
        }
        core.finish(state: .disconnected, message: nil)
    }

    /// One connection: connect, send the headers, drain until stop. The session (and its socket) is
    /// closed when this returns or throws, before the state is reported.
    private func publishUntilStopped(onConnected: () -> Void) throws(OutputIOError) {
        let session = try RTMPSession.connect(url: url)
        core.setActiveSocket(session.socket)
        // Clear the socket `stop` may shut down before the session closes it (the lifetime extension
        // keeps the optimiser from freeing the session first).
        defer { core.setActiveSocket(-1); withExtendedLifetime(session) {} }
        for header in core.headerTags { try write(header, to: session) }
        onConnected()
        core.transition(to: .connected, message: nil)
        try drain(into: session)
    }

    /// Writes queued tags until stop; after (re)connecting, dependent video waits for a keyframe.
    private func drain(into session: RTMPSession) throws(OutputIOError) {
        var awaitingKeyframe = true
        while let tag = core.nextTag() {
            if tag.kind == .video && !tag.isSequenceHeader {
                if tag.isKeyframe {
                    awaitingKeyframe = false
                } else if awaitingKeyframe {
                    core.recordSkippedVideo()
                    continue
                }
            }
            try write(tag, to: session)
            try session.serviceIncoming()
        }
    }

    private func write(_ tag: FLVTag, to session: RTMPSession) throws(OutputIOError) {
        guard tag.body.count <= FLVTag.maxBodySize else {
            core.logger.warning("dropping a \(tag.kind) tag of \(tag.body.count) bytes: too large for FLV")
            return
        }
        if tag.kind == .script && !tag.isMetadata {
            try session.sendData(body: tag.body, timestampMs: tag.timestampMs)
        } else {
            try session.write(tag.serialized())
        }
        core.recordSent(bytes: tag.serializedSize)
    }
}
