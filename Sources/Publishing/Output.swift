import Logging

/// Where tags go. Implementations never block the caller: `send` enqueues into a bounded queue
/// drained by the output's own thread.
public protocol Output: AnyObject, Sendable {
    var id: String { get }
    var url: String { get }
    var state: OutputState { get }
    var stats: OutputStats { get }
    /// Starts with the stream's header tags (metadata + sequence headers), resent after every reconnect.
    func start(headers: [FLVTag])
    func send(_ tag: FLVTag)
    /// Flushes what is queued (bounded wait, about 2 s) and closes.
    func stop()
}

/// The life of an output. `error` is final (bad URL, unwritable file); `reconnecting` is not.
public enum OutputState: String, Sendable {
    case connecting, connected, reconnecting, disconnecting, disconnected, error
}

/// Counters for one output since it was created.
public struct OutputStats: Sendable, Equatable {
    /// Tags written to the server or file, header tags included.
    public var sentTags = 0
    /// Serialised bytes of those tags (11-byte header + body + 4-byte trailer each).
    public var sentBytes = 0
    /// Video tags dropped by the queue policy or skipped while waiting for a keyframe after a reconnect.
    public var droppedVideoTags = 0
    /// Audio and data tags dropped because the queue was full of them.
    public var droppedAudioTags = 0
    /// Tags waiting in the queue now.
    public var queuedTags = 0
    /// Times the output lost (or could not establish) its connection and entered `reconnecting`.
    public var reconnects = 0

    public init() {}
}

/// Called whenever an output's state changes, on the thread that changed it (the output's own thread,
/// or the caller of `start`/`stop` for `connecting`, `disconnecting` and init-time errors). The string
/// explains errors and reconnects. Keep it quick: it runs inside the output's I/O loop.
public typealias OutputStateHandler = @Sendable (OutputState, String?) -> Void

/// Why an output could not be created.
public enum OutputError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A scheme other than rtmp:// or file://.
    case unsupportedScheme(url: String)
    /// rtmps:// (TLS), not offered.
    case tlsNotSupported(url: String)
    /// The URL has a supported scheme but cannot be used (no host, relative file path).
    case invalidURL(url: String, reason: String)

    public var description: String {
        switch self {
        case .unsupportedScheme(let url):
            "unsupported output URL \(redactedURL(url)): use rtmp://host[:port]/app/stream or file:///absolute/path.flv"
        case .tlsNotSupported(let url):
            "rtmps:// is not supported by this librtmp build (TLS publishing is unverified here): \(redactedURL(url)); use rtmp:// or a local TLS proxy"
        case .invalidURL(let url, let reason):
            "invalid output URL \(redactedURL(url)): \(reason)"
        }
    }
}

/// Creates the output for `url`: rtmp:// publishes with librtmp, file:// writes an FLV file.
public func makeOutput(id: String, url: String, logger: Logger, onStateChange: @escaping OutputStateHandler,
                       queueLimitMs: Int = 2000) throws(OutputError) -> any Output {
    switch OutputURL.scheme(of: url) {
    case "rtmp":
        if let reason = OutputURL.rtmpProblem(url) { throw .invalidURL(url: url, reason: reason) }
        return RTMPPublisher(id: id, url: url, logger: logger, onStateChange: onStateChange, queueLimitMs: queueLimitMs)
    case "file":
        guard case .success = OutputURL.filePath(url) else {
            throw .invalidURL(url: url, reason: "a file URL needs an absolute path (file:///dir/name.flv)")
        }
        return FileOutput(id: id, url: url, logger: logger, onStateChange: onStateChange, queueLimitMs: queueLimitMs)
    case "rtmps":
        throw .tlsNotSupported(url: url)
    default:
        throw .unsupportedScheme(url: url)
    }
}

/// Stream keys live in the last path component of RTMP URLs: never log or report them whole.
func redactedURL(_ url: String) -> String {
    guard OutputURL.scheme(of: url).hasPrefix("rtmp"), let slash = url.lastIndex(of: "/") else { return url }
    let key = url[url.index(after: slash)...]
    guard key.count > 4 else { return url }
    return String(url[...slash]) + key.prefix(2) + "…"
}

/// URL checks shared by the outputs and `makeOutput`.
enum OutputURL {
    /// Lower-cased scheme ("" when there is none).
    static func scheme(of url: String) -> String {
        guard let range = url.range(of: "://") else { return "" }
        return url[..<range.lowerBound].lowercased()
    }

    /// Why an rtmp:// URL cannot be published to, nil when it looks usable.
    static func rtmpProblem(_ url: String) -> String? {
        guard scheme(of: url) == "rtmp", let range = url.range(of: "://") else { return "not an rtmp:// URL" }
        let rest = url[range.upperBound...]
        let parts = rest.split(separator: "/", omittingEmptySubsequences: false)
        guard let host = parts.first, !host.isEmpty else { return "no host" }
        guard parts.count >= 3, !parts[1].isEmpty, !(parts.last ?? "").isEmpty else {
            return "needs an application and a stream name (rtmp://host/app/stream)"
        }
        guard url.utf8.count < 2048, !url.contains(where: { $0.isWhitespace || $0.asciiValue == 0 }) else {
            return "contains whitespace or is too long"
        }
        return nil
    }

    /// The absolute path of a file:// URL.
    static func filePath(_ url: String) -> Result<String, OutputError> {
        guard scheme(of: url) == "file", let range = url.range(of: "://") else { return .failure(.unsupportedScheme(url: url)) }
        let raw = String(url[range.upperBound...])
        let path = raw.removingPercentEncodingIfValid
        guard path.hasPrefix("/"), path.count > 1, !path.hasSuffix("/"), !path.contains("\0") else {
            return .failure(.invalidURL(url: url, reason: "a file URL needs an absolute path (file:///dir/name.flv)"))
        }
        return .success(path)
    }
}

extension String {
    /// Decodes %XX escapes; returns the string unchanged when an escape is malformed.
    var removingPercentEncodingIfValid: String {
        guard contains("%") else { return self }
        var bytes: [UInt8] = []
        var iterator = utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next(), let low = iterator.next(),
                      let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16) else { return self }
                bytes.append(value)
            } else {
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self) ?? self
    }
}
