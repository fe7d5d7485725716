import Publishing

/// One output of a room: where it goes, and how it queues and retries.
public struct OutputSpec: Sendable, Equatable {
    public var url: String
    public var options: OutputOptions

    /// Without `options`, the defaults, with the interleave that suits the destination (`Interleave.default(for:)`).
    public init(url: String, options: OutputOptions? = nil) {
        self.url = url
        self.options = options ?? OutputOptions(interleave: .default(for: url))
    }
}

/// The JSON of one output, in `POST /v1/rooms/{room}/outputs` and in `outputs` of `POST /v1/rooms`:
/// `{"url", "queueMs"?, "maxRetries"?, "backoff"?: {"initialMaxMs"?, "maxMs"?}, "interleave"?}`.
public struct OutputRequest: Decodable, Sendable {
    public var url: String
    /// Milliseconds of media the output may queue before dropping (video first).
    public var queueMs: Int?
    /// Retries before giving up with `error`; absent or null never gives up, 0 gives up at once.
    public var maxRetries: Int?
    public var backoff: BackoffRequest?
    /// "lowLatency" or "strict" (see `OutputOptions.Interleave`); absent: strict for files, lowLatency otherwise.
    public var interleave: String?

    public struct BackoffRequest: Decodable, Sendable {
        /// The first retry waits 0…initialMaxMs; later windows grow by as much.
        public var initialMaxMs: Int?
        /// The longest wait.
        public var maxMs: Int?

        public init(initialMaxMs: Int? = nil, maxMs: Int? = nil) {
            self.initialMaxMs = initialMaxMs
            self.maxMs = maxMs
        }
    }

    public init(
        url: String, queueMs: Int? = nil, maxRetries: Int? = nil, backoff: BackoffRequest? = nil,
        interleave: String? = nil
    ) {
        self.url = url
        self.queueMs = queueMs
        self.maxRetries = maxRetries
        self.backoff = backoff
        self.interleave = interleave
    }

    /// Fills in the defaults and checks every range; a refusal is 400 `invalid_output` naming the limit.
    public func resolve() throws(RoomError) -> OutputSpec {
        var options = OutputOptions()
        if let queueMs { options.queueLimitMs = queueMs }
        options.maxRetries = maxRetries
        if let v = backoff?.initialMaxMs { options.backoff.initialMaxMs = v }
        if let v = backoff?.maxMs { options.backoff.maxMs = v }
        if let interleave {
            guard let mode = OutputOptions.Interleave(rawValue: interleave) else {
                let known = OutputOptions.Interleave.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: " or ")
                throw .badRequest("invalid_output", "interleave must be \(known), got \"\(interleave.prefix(40))\"")
            }
            options.interleave = mode
        } else {
            options.interleave = .default(for: url)
        }
        do { try options.validate() } catch { throw .badRequest("invalid_output", error.message) }
        return OutputSpec(url: url, options: options)
    }
}
