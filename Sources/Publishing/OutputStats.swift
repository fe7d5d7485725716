/// Counters for one output since it was created, and its queue now.
public struct OutputStats: Sendable, Equatable {
    /// Tags written to the server or file, header tags included.
    public var sentTags = 0
    /// Serialised bytes of those tags (11-byte header + body + 4-byte trailer each).
    public var sentBytes = 0
    /// Video frames written (sequence headers not counted).
    public var sentVideoFrames = 0
    /// Audio frames written (sequence headers not counted).
    public var sentAudioFrames = 0
    /// Video tags dropped by the queue policy (the link did not keep up).
    public var droppedVideoTags = 0
    /// Audio tags dropped by the queue policy (only once no video was left to drop).
    public var droppedAudioTags = 0
    /// Data tags (voice levels) dropped with the audio.
    public var droppedDataTags = 0
    /// Video tags skipped after a (re)connect while waiting for a keyframe (see `StartGate`).
    public var skippedVideoTags = 0
    /// Audio and data tags skipped after a (re)connect because they were older than the first keyframe.
    public var skippedAudioTags = 0
    /// Tags waiting in the queue now.
    public var queuedTags = 0
    /// The timestamp span of the queue now, in milliseconds (what the drop limit applies to).
    public var queueMs = 0
    /// Times the output lost (or could not establish) its connection.
    public var reconnects = 0

    public init() {}
}

/// One `output_status` report: rates over the last interval, drop counters and the queue now.
public struct OutputStatus: Sendable, Equatable, Encodable {
    /// Video frames per second written over the interval, to 0.1.
    public var videoFps: Double
    /// Audio frames per second written over the interval, to 0.1 (AAC at 48 kHz: 46.9).
    public var audioFps: Double
    /// Kilobits per second written over the interval (whole FLV tags).
    public var kbps: Int
    /// Video frames dropped by the queue policy since the output was created.
    public var droppedVideoFrames: Int
    /// Audio frames dropped by the queue policy since the output was created.
    public var droppedAudioFrames: Int
    /// The queue's timestamp span now.
    public var queueMs: Int

    public init(
        videoFps: Double = 0, audioFps: Double = 0, kbps: Int = 0, droppedVideoFrames: Int = 0,
        droppedAudioFrames: Int = 0, queueMs: Int = 0
    ) {
        self.videoFps = videoFps
        self.audioFps = audioFps
        self.kbps = kbps
        self.droppedVideoFrames = droppedVideoFrames
        self.droppedAudioFrames = droppedAudioFrames
        self.queueMs = queueMs
    }
}

/// Turns an output's cumulative counters into per-interval rates. A value owned by whoever samples
/// (the room, every status interval); the time is passed in.
public struct OutputRateMeter: Sendable {
    private var last = OutputStats()
    private var lastMs: Int64

    /// `startMs`: when the output was created, on the caller's monotonic millisecond clock.
    public init(startMs: Int64) { lastMs = startMs }

    /// The status since the previous sample (or since `startMs`). A zero-length interval reports zero rates.
    public mutating func sample(_ stats: OutputStats, nowMs: Int64) -> OutputStatus {
        let elapsed = nowMs - lastMs
        defer {
            last = stats
            lastMs = nowMs
        }
        func perSecond(_ count: Int) -> Double {
            guard elapsed > 0 else { return 0 }
            return (Double(max(0, count)) * 10_000 / Double(elapsed)).rounded() / 10
        }
        let bits = max(0, stats.sentBytes - last.sentBytes) * 8
        return OutputStatus(
            videoFps: perSecond(stats.sentVideoFrames - last.sentVideoFrames),
            audioFps: perSecond(stats.sentAudioFrames - last.sentAudioFrames),
            kbps: elapsed > 0 ? Int(Int64(bits) / elapsed) : 0,
            droppedVideoFrames: stats.droppedVideoTags, droppedAudioFrames: stats.droppedAudioTags,
            queueMs: stats.queueMs)
    }
}
