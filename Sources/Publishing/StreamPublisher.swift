import Foundation
import Logging

/// Publishes the programme's FLV tags to a server on its own thread: RTMP with librtmp, or SRT (caller, MPEG-TS by
/// libavformat's muxer, `SRTEnvironment`).
///
/// `send` only enqueues (bounded, see `TagQueue`). The worker connects, writes the header tags, asks its
/// owner for a keyframe, then drains the queue. On a connect or write failure it goes `reconnecting`
/// with the next attempt number, waits a randomised, growing backoff (`ReconnectPolicy`), reconnects,
/// resends the headers and skips video until the next keyframe, so the server always sees a decodable
/// stream. It gives up (final `error`) only when `maxRetries` is exhausted or the server refuses the
/// application, which no retry can fix; a refused TCP connection (server down) is always retried.
///
/// The worker thread keeps the publisher alive until `stop()`: always stop an output you started.
public final class StreamPublisher: Output {
    /// A connection that lasted this long resets the backoff and the retry count.
    static let stableConnectionSeconds = 5.0

    public let id: String
    public let url: String
    public var options: OutputOptions { core.options }
    private let core: OutputCore
    private let policy: ReconnectPolicy
    private let environment: any PublisherEnvironment

    /// A URL that is not a usable rtmp://, rtmps:// or srt:// URL puts the publisher straight into the final `error`
    /// state.
    public convenience init(
        id: String, url: String, options: OutputOptions = OutputOptions(), logger: Logger,
        destinations: DestinationPolicy = DestinationPolicy(),
        onKeyframeNeeded: @escaping KeyframeRequestHandler = {},
        onStateChange: @escaping OutputStateHandler
    ) {
        let environment: any PublisherEnvironment =
            OutputURL.scheme(of: url) == "srt"
            ? SRTEnvironment(destinations: destinations) : LibRTMPEnvironment(destinations: destinations)
        self.init(
            id: id, url: url, options: options, logger: logger, environment: environment,
            random: { Double.random(in: 0..<1) }, onKeyframeNeeded: onKeyframeNeeded, onStateChange: onStateChange)
    }

    /// With an injected environment and random source (tests).
    init(
        id: String, url: String, options: OutputOptions, logger: Logger, environment: any PublisherEnvironment,
        random: @escaping @Sendable () -> Double, onKeyframeNeeded: @escaping KeyframeRequestHandler,
        onStateChange: @escaping OutputStateHandler
    ) {
        self.id = id
        self.url = url
        self.environment = environment
        policy = ReconnectPolicy(options: options, random: random)
        var logger = logger
        logger[metadataKey: "output"] = "\(id)"
        var initial = OutputStateChange(state: .disconnected)
        if let problem = environment.urlProblem(url) {
            initial = OutputStateChange(state: .error, message: "cannot publish to \(redactedURL(url)): \(problem)")
        } else {
            if OutputURL.scheme(of: url) == "rtmps" {
                logger.warning("rtmps: the stream is encrypted, but librtmp does not verify the server's certificate")
            }
            do { try options.validate() } catch {
                initial = OutputStateChange(state: .error, message: error.description)
            }
        }
        core = OutputCore(
            logger: logger, options: options, initial: initial, onKeyframeNeeded: onKeyframeNeeded,
            onStateChange: onStateChange)
    }

    public var state: OutputState { core.state }
    public var stateChange: OutputStateChange { core.stateChange }
    public var stats: OutputStats { core.stats }
    /// The text of the last error or reconnect reason, if any.
    public var lastMessage: String? { core.message }

    public func replaceHeaders(_ headers: [FLVTag]) { core.replaceHeaders(headers) }

    public func start(headers: [FLVTag]) {
        guard core.begin(headers: headers) else { return }
        core.transition(to: .connecting, attempt: 0, message: nil)
        OutputCore.startWorker(named: "\(OutputURL.scheme(of: url))-\(id)") { [self] in run() }
    }

    public func send(_ tag: FLVTag) {
        core.enqueue(tag)
    }

    public func stop() {
        core.requestStopAndWait()
    }

    // MARK: worker thread

    private func run() {
        var retry = 0  // retries since the last stable connection; the attempt number of the next connect
        var refusalConfirmed = false
        while !core.isStopRequested {
            var connectedAt: Double?
            do {
                try publishUntilStopped(attempt: retry) { connectedAt = environment.now() }
                break
            } catch {
                if core.isStopRequested { break }
                if let detail = error.detail { core.logger.warning("output refused: \(detail)") }
                if error.isFinal {
                    // Confirm once, at once: a server that dies between handshake and answer looks the same.
                    if !refusalConfirmed {
                        refusalConfirmed = true
                        continue
                    }
                    return core.finish(state: .error, attempt: retry, message: error.description)
                }
                refusalConfirmed = false
                if let connectedAt, environment.now() - connectedAt >= Self.stableConnectionSeconds { retry = 0 }
                core.recordReconnect()
                guard let delayMs = policy.delayMs(beforeRetry: retry + 1) else {
                    return core.finish(state: .error, attempt: retry, message: gaveUpMessage(retries: retry, error))
                }
                retry += 1
                core.transition(to: .reconnecting, attempt: retry, message: error.description)
                core.logger.debug("retry \(retry) in \(delayMs) ms")
                if !environment.wait(seconds: Double(delayMs) / 1000, core: core) { break }
            }
        }
        core.finish(state: .disconnected, message: nil)
    }

    private func gaveUpMessage(retries: Int, _ error: OutputIOError) -> String {
        retries == 0
            ? "not retrying (maxRetries is 0): \(error.description)"
            : "gave up after \(retries) retries (maxRetries \(policy.maxRetries ?? retries)): \(error.description)"
    }

    /// One connection: connect, send the headers, drain until stop. The connection (and its socket) is
    /// closed when this returns or throws, before the state is reported.
    private func publishUntilStopped(attempt: Int, onConnected: () -> Void) throws(OutputIOError) {
        let connection = try environment.connect(url: url)
        core.setActiveSocket(connection.socket)
        // Clear the socket `stop` may shut down before the connection closes it (the lifetime extension
        // keeps the optimiser from freeing the connection first).
        defer {
            core.setActiveSocket(-1)
            withExtendedLifetime(connection) {}
        }
        for header in core.headerTags { try write(header, to: connection) }
        onConnected()
        // The queue may hold no keyframe for seconds (keyint): ask for one now instead of skipping video
        // till then. Asked before `connected` is reported, so whoever sees `connected` knows it was asked.
        core.onKeyframeNeeded()
        core.transition(to: .connected, attempt: attempt, message: nil)
        try drain(into: connection)
    }

    /// Writes queued tags until stop, starting at a keyframe with the audio of that moment (`StartGate`).
    private func drain(into connection: any PublishingConnection) throws(OutputIOError) {
        var gate = StartGate(
            hasVideo: core.headerTags.contains { $0.kind == .video }, queueLimitMs: core.options.queueLimitMs)
        var ready: [FLVTag] = []  // reused for every tag
        ready.reserveCapacity(64)
        while let tag = core.nextTag() {
            let skipped = gate.admit(tag, into: &ready)
            core.recordSkipped(video: skipped.video, audio: skipped.audio)
            for tag in ready { try write(tag, to: connection) }
            ready.removeAll(keepingCapacity: true)
            try connection.serviceIncoming()
        }
        gate.flush(into: &ready)
        for tag in ready { try write(tag, to: connection) }
    }

    private func write(_ tag: FLVTag, to connection: any PublishingConnection) throws(OutputIOError) {
        guard tag.body.count <= FLVTag.maxBodySize else {
            core.logger.warning("dropping a \(tag.kind) tag of \(tag.body.count) bytes: too large for FLV")
            return
        }
        try connection.write(tag)
        core.recordSent(tag)
    }
}
