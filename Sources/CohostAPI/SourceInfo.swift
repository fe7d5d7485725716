/// A pulled source as the API shows it (protocol/openapi.yaml `Source`): its URL without credentials, its state
/// and what it carries.
public struct SourceInfo: Codable, Sendable, Equatable {
    public var userId: String
    public var url: String
    /// `connecting`, `live`, `retrying`, `failed` or `ended`.
    public var state: String
    /// k for the k-th retry since the source was last live.
    public var attempt: Int
    public var error: String?
    public var loop: Bool
    public var gain: Double
    public var transport: String?
    public var latencyMs: Int
    /// Known once the input has opened.
    public var audio: Bool?
    public var video: Bool?
    /// `srt` for a source an encoder pushes (`url` is then where to push, key included); absent for a pulled one.
    public var listen: String?
    /// What its reader decoded and the room played, since the source was added.
    public var audioFrames = 0
    public var picturesDecoded = 0
    public var picturesShown = 0
    public var picturesDropped = 0
    /// Packets of pictures not decoded because no region showed the source.
    public var picturesSkipped = 0
    /// For receivers' slots: access units of its own H.264 sent as they are, pictures encoded (its own stream
    /// could not go as it is), and units dropped because they were not taken in time.
    public var framesForwarded = 0
    public var framesEncoded = 0
    public var framesForwardDropped = 0
    /// Audio waiting for the mix now, and how often the mix found none mid-stream.
    public var audioBufferedMs = 0
    public var underruns = 0
    /// Audio cut to keep the delay down (a burst, a fast input clock).
    public var trimmedMs = 0

    public init(
        userId: String, url: String, state: String, attempt: Int, error: String?, loop: Bool, gain: Double,
        transport: String?, latencyMs: Int, audio: Bool?, video: Bool?, listen: String? = nil
    ) {
        self.listen = listen
        self.userId = userId
        self.url = url
        self.state = state
        self.attempt = attempt
        self.error = error
        self.loop = loop
        self.gain = gain
        self.transport = transport
        self.latencyMs = latencyMs
        self.audio = audio
        self.video = video
    }
}

/// `GET /v1/rooms/{room}/sources`.
public struct SourceList: Codable, Sendable, Equatable {
    public var sources: [SourceInfo]
    public init(sources: [SourceInfo]) { self.sources = sources }
}
