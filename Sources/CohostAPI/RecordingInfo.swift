/// One recording of a participant's own tracks (protocol/openapi.yaml `Recording`; also the 201 of
/// `POST /v1/rooms/{room}/recordings`).
public struct RecordingInfo: Codable, Sendable, Equatable {
    public var id: String
    public var userId: String
    /// `camera` (microphone and camera) or `screen`.
    public var source: String
    /// The file's name in the recordings directory.
    public var file: String
    /// `vp8`, `h264`, or nil without video.
    public var videoCodec: String?
    public var audio: Bool
    /// RFC 3339 UTC.
    public var startedAt: String
    public var videoFrames: Int
    public var audioFrames: Int
    /// Frames the recorder's queue had no room for.
    public var droppedFrames: Int

    public init(
        id: String, userId: String, source: String, file: String, videoCodec: String?, audio: Bool, startedAt: String,
        videoFrames: Int = 0, audioFrames: Int = 0, droppedFrames: Int = 0
    ) {
        self.id = id
        self.userId = userId
        self.source = source
        self.file = file
        self.videoCodec = videoCodec
        self.audio = audio
        self.startedAt = startedAt
        self.videoFrames = videoFrames
        self.audioFrames = audioFrames
        self.droppedFrames = droppedFrames
    }
}
