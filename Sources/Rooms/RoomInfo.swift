import Foundation
import Publishing
import Layout

/// The JSON of `GET /v1/rooms/{room}` and of the 201 after `POST /v1/rooms`.
public struct RoomInfo: Encodable, Sendable {
    public struct CanvasInfo: Encodable, Sendable {
        var width, height, fps: Int
        var background, placeholder: String
        var holdMs: Int
        var backgroundImage: ImageInfo?, placeholderImage: ImageInfo?
    }
    /// A room picture as reported (never its bytes).
    public struct ImageInfo: Encodable, Sendable { var width, height, bytes: Int }
    public struct WatermarkInfo: Encodable, Sendable {
        var image: ImageInfo
        var x, y, width, height: Int
        var opacity: Double
    }
    public struct VideoInfo: Encodable, Sendable {
        var bitrate: Int
        var keyint: Int
        var profile: String
        var adaptiveBitrate: Bool
        var minBitrate: Int
        var dynamicFps: Bool
    }
    public struct AudioInfo: Encodable, Sendable {
        var bitrate: Int
        var channels: Int
    }
    public struct ParticipantInfo: Encodable, Sendable {
        var userId: String
        var joinedAt: String
        var muted: Bool
        var gain: Float
        /// Joined with an admin token.
        var admin: Bool
        /// The last `voice_levels` value, 0…100.
        var level: Int
        var streams: [StreamReport]
        /// What Cohost sends the participant back (mix-minus audio, room view), with its receiver's reports.
        var returns: [ReturnReport]
    }
    /// One output: its state, counters since it started, and the rates of the last status interval.
    public struct OutputInfo: Encodable, Sendable {
        public var id: String, url: String, state: String
        /// 0 for the first connection, k for the k-th retry since the last stable connection.
        public var attempt: Int
        /// The reconnect reason or final error, when there is one.
        public var error: String?
        public var sentBytes: Int, droppedVideoTags: Int, droppedAudioTags: Int, reconnects: Int
        /// Skipped after (re)connects so each connection starts at a keyframe with the audio of that moment.
        public var skippedVideoTags: Int, skippedAudioTags: Int
        public var queueLimitMs: Int, maxRetries: Int?
        /// "lowLatency" or "strict" (`OutputOptions.Interleave`).
        public var interleave: String
        // The last `output_status` numbers (zero before the first interval) and the encoder target now.
        public var videoFps: Double, audioFps: Double, kbps: Int
        public var droppedVideoFrames: Int, droppedAudioFrames: Int, queueMs: Int, bitrate: Int

        init(_ output: any Output, status: OutputStatus, bitrateKbps: Int) {
            let change = output.stateChange
            let stats = output.stats
            id = output.id
            url = output.url
            state = change.state.rawValue
            attempt = change.attempt
            error = change.message
            sentBytes = stats.sentBytes
            droppedVideoTags = stats.droppedVideoTags
            droppedAudioTags = stats.droppedAudioTags
            reconnects = stats.reconnects
            skippedVideoTags = stats.skippedVideoTags
            skippedAudioTags = stats.skippedAudioTags
            queueLimitMs = output.options.queueLimitMs
            maxRetries = output.options.maxRetries
            interleave = output.options.interleave.rawValue
            videoFps = status.videoFps
            audioFps = status.audioFps
            kbps = status.kbps
            droppedVideoFrames = status.droppedVideoFrames
            droppedAudioFrames = status.droppedAudioFrames
            // The queue as it is now, not as it was at the last interval.
            queueMs = stats.queueMs
            bitrate = bitrateKbps
        }
    }

    var name: String
    var audioOnly: Bool
    var maxParticipants: Int
    var canvas: CanvasInfo
    var video: VideoInfo?
    var audio: AudioInfo
    var layout: Layout
    /// The room's configured anchor (`anchor`), and who a pip layout shows full-canvas now (`pipAnchor`).
    var anchor: String?
    var pipAnchor: String?
    var activeSpeaker: String?
    var watermark: WatermarkInfo?
    var participants: [ParticipantInfo]
    var outputs: [OutputInfo]
    var statusIntervalMs: Int
    var maxIngestBitrate: Int
    var maxVideoSize: RoomConfig.Size
    /// The room view's settings, or "none".
    var returnVideo: ReturnVideoInfo

    enum ReturnVideoInfo: Encodable {
        case none
        case view(RoomConfig.ReturnVideo)
        func encode(to encoder: any Encoder) throws {
            switch self {
            case .none:
                var c = encoder.singleValueContainer()
                try c.encode("none")
            case .view(let v): try v.encode(to: encoder)
            }
        }
    }

    public init(_ room: Room) {
        let c = room.config
        name = c.name
        audioOnly = c.audioOnly
        maxParticipants = c.maxParticipants
        let (anchor, images) = room.appearance
        canvas = CanvasInfo(
            width: c.canvas.width, height: c.canvas.height, fps: c.canvas.fps, background: c.canvas.background,
            placeholder: c.canvas.placeholder, holdMs: c.canvas.holdMs,
            backgroundImage: images.background?.info, placeholderImage: images.placeholder?.info)
        self.anchor = anchor
        pipAnchor = room.effectiveAnchor
        watermark = images.watermark.map { w in
            WatermarkInfo(
                image: w.image.info, x: w.rect.x, y: w.rect.y, width: w.rect.width, height: w.rect.height,
                opacity: w.opacity)
        }
        let voice = room.voiceReport
        activeSpeaker = voice.activeSpeaker
        video =
            c.audioOnly
            ? nil
            : VideoInfo(
                bitrate: c.video.bitrateKbps, keyint: c.video.keyintSeconds, profile: c.video.profile.rawValue,
                adaptiveBitrate: c.video.adaptiveBitrate, minBitrate: c.video.minBitrateKbps,
                dynamicFps: c.video.dynamicFps)
        audio = AudioInfo(bitrate: c.audio.bitrateKbps, channels: c.audio.channels)
        layout = room.currentLayout
        participants = room.participants.map { p in
            ParticipantInfo(
                userId: p.userId, joinedAt: Date.ISO8601FormatStyle().format(p.joinedAt), muted: p.muted, gain: p.gain,
                admin: p.isAdmin, level: voice.levels[p.userId] ?? 0, streams: p.reports(),
                returns: p.returnReports())
        }
        outputs = room.outputs
        statusIntervalMs = c.statusIntervalMs
        maxIngestBitrate = c.maxIngestBitrate
        maxVideoSize = c.maxVideoSize
        returnVideo = c.returnVideo.map { .view($0) } ?? .none
    }
}
