import Logging

/// Where tags go. Implementations never block the caller: `send` enqueues into a bounded queue
/// drained by the output's own thread.
public protocol Output: AnyObject, Sendable {
    var id: String { get }
    var url: String { get }
    var options: OutputOptions { get }
    var state: OutputState { get }
    /// The state with its attempt number and message, as last reported to the state handler.
    var stateChange: OutputStateChange { get }
    var stats: OutputStats { get }
    /// Starts with the stream's header tags (metadata + sequence headers), resent after every reconnect.
    func start(headers: [FLVTag])
    /// New header tags (a new picture size) for whatever (re)connects from now on; the stream itself carries the new
    /// sequence header in front of its next keyframe.
    func replaceHeaders(_ headers: [FLVTag])
    func send(_ tag: FLVTag)
    /// Flushes what is queued (bounded wait, about 2 s) and closes.
    func stop()
}

/// The life of an output. `error` is final (bad URL, unknown application, unwritable file, retries
/// exhausted); `reconnecting` is not.
public enum OutputState: String, Sendable {
    case connecting, connected, reconnecting, disconnecting, disconnected, error
}

/// One state report: what `output_state` events carry.
public struct OutputStateChange: Sendable, Equatable {
    public var state: OutputState
    /// 0 for the first connection; k for the k-th retry since the output last had a stable connection.
    public var attempt: Int
    /// Why: the error that caused a reconnect or the final error; nil otherwise.
    public var message: String?

    public init(state: OutputState, attempt: Int = 0, message: String? = nil) {
        self.state = state
        self.attempt = attempt
        self.message = message
    }
}

/// Called whenever an output's state, attempt or message changes, on the thread that changed it (the
/// output's own thread, or the caller of `start`/`stop` for `connecting`, `disconnecting` and init-time
/// errors). Keep it quick: it runs inside the output's I/O loop.
public typealias OutputStateHandler = @Sendable (OutputStateChange) -> Void

/// Called by an output that needs a fresh keyframe: each time it has (re)connected and is skipping
/// video until the next one. The owner should make its next encoded frame an IDR.
public typealias KeyframeRequestHandler = @Sendable () -> Void

/// Why an output could not be created.
public enum OutputError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A scheme other than rtmp://, rtmps:// or file://.
    case unsupportedScheme(url: String)
    /// The URL has a supported scheme but cannot be used (no host, relative file path).
    case invalidURL(url: String, reason: String)
    /// An option is out of range (see `OutputOptions.validate`).
    case invalidOptions(OutputOptionsError)
    /// A file:// URL outside the recordings directory.
    case forbiddenPath(url: String, reason: String)
    /// An rtmp[s]:// host the operator's rules refuse (link-local, metadata, outside `output_hosts`).
    case forbiddenHost(url: String, reason: String)

    public var description: String {
        switch self {
        case .unsupportedScheme(let url):
            "unsupported output URL \(redactedURL(url)): use rtmp[s]://host[:port]/app/stream, srt://host:port?streamid=… or file:///absolute/path.flv (.mp4, .ts)"
        case .invalidURL(let url, let reason):
            "invalid output URL \(redactedURL(url)): \(reason)"
        case .invalidOptions(let error):
            error.description
        case .forbiddenPath(_, let reason), .forbiddenHost(_, let reason):
            reason
        }
    }
}

/// Creates the output for `url`: rtmp:// and rtmps:// publish with librtmp, srt:// with libavformat (MPEG-TS over
/// libsrt), file:// writes an FLV file, or fragmented MP4 or MPEG-TS for a name ending in .mp4 or .ts.
/// rtmps:// is TLS through Debian's librtmp (GnuTLS), which neither verifies the server's certificate
/// nor sends SNI: the stream is encrypted but the server is not authenticated (logged as a warning).
/// Nothing happens until `start`.
public func makeOutput(
    id: String, url: String, options: OutputOptions = OutputOptions(), rules: OutputRules = OutputRules(),
    logger: Logger, onKeyframeNeeded: @escaping KeyframeRequestHandler = {},
    onStateChange: @escaping OutputStateHandler
) throws(OutputError) -> any Output {
    do { try options.validate() } catch { throw .invalidOptions(error) }
    switch OutputURL.scheme(of: url) {
    case "rtmp", "rtmps", "srt":
        let srt = OutputURL.scheme(of: url) == "srt"
        if let reason = srt ? OutputURL.srtProblem(url) : OutputURL.rtmpProblem(url) {
            throw .invalidURL(url: url, reason: reason)
        }
        if let reason = rules.destinations.refusal(host: OutputURL.rtmpHost(url)) {
            throw .forbiddenHost(url: url, reason: reason)
        }
        return StreamPublisher(
            id: id, url: url, options: options, logger: logger, destinations: rules.destinations,
            onKeyframeNeeded: onKeyframeNeeded, onStateChange: onStateChange)
    case "file":
        let path: String
        switch rules.filePath(url) {
        case .success(let resolved): path = resolved
        case .failure(let error): throw error
        }
        return FileOutput(
            id: id, url: url, path: path, options: options, quota: rules.recordings?.quota, logger: logger,
            onKeyframeNeeded: onKeyframeNeeded, onStateChange: onStateChange)
    default:
        throw .unsupportedScheme(url: url)
    }
}

/// Which outputs can change picture size while they run.
public enum PictureSizeChange {
    /// RTMP servers and FLV files take a new AVC sequence header mid-stream; MPEG-TS over SRT, fragmented MP4 and
    /// MPEG-TS files (and HLS) fix the picture size when they start.
    public static func isCarried(byOutputAt url: String) -> Bool {
        switch OutputURL.scheme(of: url) {
        case "rtmp", "rtmps": true
        case "file": FileOutput.container(of: url) == nil
        default: false
        }
    }
}
