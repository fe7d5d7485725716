import Publishing

/// One output of a room: where it goes, and how it queues and retries.
public struct OutputSpec: Sendable, Equatable {
    /// Where it goes; for HLS, `hls` (served by Cohost itself).
    public var url: String
    public var options: OutputOptions
    /// Set for an HLS output.
    public var hls: HLSOptions?

    /// Without `options`, the defaults, with the interleave that suits the destination (`Interleave.default(for:)`).
    public init(url: String, options: OutputOptions? = nil) {
        self.url = url
        self.options = options ?? OutputOptions(interleave: .default(for: url))
    }

    /// An HLS output served at `/v1/rooms/{room}/hls/index.m3u8`.
    public init(hls: HLSOptions, options: OutputOptions? = nil) {
        url = "hls"
        self.options = options ?? OutputOptions(interleave: .lowLatency)
        self.hls = hls
    }
}

/// The JSON of one output, in `POST /v1/rooms/{room}/outputs` and in `outputs` of `POST /v1/rooms`:
/// `{"url", "queueMs"?, "maxRetries"?, "backoff"?: {"initialMaxMs"?, "maxMs"?}, "interleave"?}`, or for HLS
/// `{"kind":"hls", "segmentSeconds"?, "partSeconds"?, "windowSegments"?, "public"?, "vod"?}`.
public struct OutputRequest: Decodable, Sendable {
    /// Required but for HLS.
    public var url: String?
    /// "hls", or absent (the URL's scheme says what it is).
    public var kind: String?
    public var segmentSeconds: Double?
    /// 0: plain HLS, no parts.
    public var partSeconds: Double?
    public var windowSegments: Int?
    /// Served without a token.
    public var `public`: Bool?
    /// Also written into the recordings directory, with a VOD playlist when the output stops.
    public var vod: Bool?
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
        url: String?, queueMs: Int? = nil, maxRetries: Int? = nil, backoff: BackoffRequest? = nil,
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
        switch kind {
        case nil:
            guard let url else {
                throw .badRequest("invalid_output", "an output needs a url (or \"kind\":\"hls\")")
            }
            return try resolve(url: url)
        case "hls":
            guard url == nil else { throw .badRequest("invalid_output", "an HLS output takes no url") }
            var hls = HLSOptions()
            if let segmentSeconds { hls.segmentSeconds = segmentSeconds }
            if let partSeconds { hls.partSeconds = partSeconds == 0 ? nil : partSeconds }
            if let windowSegments { hls.windowSegments = windowSegments }
            hls.isPublic = self.public ?? false
            hls.vod = vod ?? false
            if let problem = hls.problem { throw .badRequest("invalid_output", problem) }
            var spec = try resolve(url: "hls")
            spec.hls = hls
            return spec
        case let other?:
            throw .badRequest("invalid_output", "kind is \"hls\" or absent, got \"\(other.prefix(40))\"")
        }
    }

    /// The HLS fields of an output with a URL are ignored, like any unknown field.
    private func resolve(url: String) throws(RoomError) -> OutputSpec {
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
