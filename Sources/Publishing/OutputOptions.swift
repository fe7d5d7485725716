/// How one output queues and retries. The defaults suit a live RTMP destination: 2 s of queue, never
/// give up, waits of 0–2 s, 2–4 s, 4–6 s, then 6–10 s between attempts.
public struct OutputOptions: Sendable, Equatable {
    /// Milliseconds of media (timestamp span) the queue may hold before it drops; see `TagQueue`.
    public var queueLimitMs: Int
    /// Retries after a failure before the output gives up with the final `error` state: nil never gives
    /// up, 0 gives up at the first failure. Counted since the last stable connection, so an output that
    /// ran well for a while gets its full allowance again.
    public var maxRetries: Int?
    /// The waits between attempts.
    public var backoff: BackoffOptions
    /// How audio and video tags are ordered on their way to this output.
    public var interleave: Interleave

    /// `lowLatency` sends each kind as soon as it is encoded (timestamps monotonic per kind, the picture
    /// reaches the server ≈100 ms sooner); `strict` holds tags until the other kind caught up, so
    /// timestamps never go backwards across kinds (files, and servers that insist on it).
    public enum Interleave: String, Sendable, Equatable, CaseIterable {
        case lowLatency, strict

        /// `strict` for a file (read and seeked later, not watched live: it gets the conventional order),
        /// `lowLatency` for everything else.
        public static func `default`(for url: String) -> Interleave {
            url.lowercased().hasPrefix("file:") ? .strict : .lowLatency
        }
    }

    public init(
        queueLimitMs: Int = 2000, maxRetries: Int? = nil, backoff: BackoffOptions = BackoffOptions(),
        interleave: Interleave = .lowLatency
    ) {
        self.queueLimitMs = queueLimitMs
        self.maxRetries = maxRetries
        self.backoff = backoff
        self.interleave = interleave
    }

    /// Accepted queue limits: under 100 ms drops frames on any hiccup; over 10 s holds too much memory
    /// (20 Mbit/s × 10 s = 25 MB per output).
    public static let queueLimitRange = 100...10_000
    public static let maxRetriesRange = 0...100_000

    /// Throws the first field outside its range, named as in the HTTP API.
    public func validate() throws(OutputOptionsError) {
        try OutputOptionsError.check(queueLimitMs, Self.queueLimitRange, "queueMs")
        if let maxRetries { try OutputOptionsError.check(maxRetries, Self.maxRetriesRange, "maxRetries") }
        try OutputOptionsError.check(backoff.initialMaxMs, BackoffOptions.initialMaxRange, "backoff.initialMaxMs")
        try OutputOptionsError.check(backoff.maxMs, BackoffOptions.maxRange, "backoff.maxMs")
        guard backoff.maxMs >= backoff.initialMaxMs else {
            throw OutputOptionsError(
                field: "backoff.maxMs",
                message:
                    "backoff.maxMs must be at least backoff.initialMaxMs (\(backoff.initialMaxMs)), got \(backoff.maxMs)"
            )
        }
    }
}

/// The randomised waits between connection attempts (see `ReconnectPolicy.window(forRetry:)`).
public struct BackoffOptions: Sendable, Equatable {
    /// The first retry waits 0…initialMaxMs; each later window is as wide and starts where the last ended.
    public var initialMaxMs: Int
    /// The longest wait. Once the growing windows pass 60 % of it, every wait is drawn from 60–100 % of it.
    public var maxMs: Int

    public init(initialMaxMs: Int = 2000, maxMs: Int = 10_000) {
        self.initialMaxMs = initialMaxMs
        self.maxMs = maxMs
    }

    public static let initialMaxRange = 100...60_000
    public static let maxRange = 100...600_000
}

/// An output option outside its range; `message` names the field and the limit.
public struct OutputOptionsError: Error, Equatable, Sendable, CustomStringConvertible {
    public let field: String
    public let message: String

    public var description: String { message }

    static func check(_ value: Int, _ range: ClosedRange<Int>, _ field: String) throws(OutputOptionsError) {
        guard range.contains(value) else {
            throw OutputOptionsError(
                field: field,
                message: "\(field) must be within \(range.lowerBound)...\(range.upperBound), got \(value)")
        }
    }
}
