/// One output of a room: its state, counters since it started, and the rates of the last status interval
/// (protocol/openapi.yaml `Output`; also the 201 of `POST /v1/rooms/{room}/outputs`).
public struct OutputInfo: Codable, Sendable {
    public var id: String, url: String, state: String
    /// 0 for the first connection, k for the k-th retry since the last stable connection.
    public var attempt: Int
    /// The reconnect reason or final error, when there is one.
    public var error: String?
    public var sentBytes: Int, droppedVideoTags: Int, droppedAudioTags: Int, reconnects: Int
    /// Skipped after (re)connects so each connection starts at a keyframe with the audio of that moment.
    public var skippedVideoTags: Int, skippedAudioTags: Int
    public var queueLimitMs: Int, maxRetries: Int?
    /// "lowLatency" or "strict".
    public var interleave: String
    // The last `output_status` numbers (zero before the first interval) and the encoder target now.
    public var videoFps: Double, audioFps: Double, kbps: Int
    public var droppedVideoFrames: Int, droppedAudioFrames: Int, queueMs: Int, bitrate: Int

    /// An output that has sent nothing yet; its owner fills in the rest.
    public init(id: String, url: String, state: String, interleave: String, queueLimitMs: Int, maxRetries: Int?) {
        self.id = id
        self.url = url
        self.state = state
        attempt = 0
        sentBytes = 0
        droppedVideoTags = 0
        droppedAudioTags = 0
        reconnects = 0
        skippedVideoTags = 0
        skippedAudioTags = 0
        self.queueLimitMs = queueLimitMs
        self.maxRetries = maxRetries
        self.interleave = interleave
        videoFps = 0
        audioFps = 0
        kbps = 0
        droppedVideoFrames = 0
        droppedAudioFrames = 0
        queueMs = 0
        bitrate = 0
    }
}
