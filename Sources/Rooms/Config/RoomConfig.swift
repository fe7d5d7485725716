import Media
import Codecs
import Publishing
import Layout

/// A room's resolved configuration: every field has a value and has been validated.
public struct RoomConfig: Sendable, Equatable {
    public var name: String
    public var audioOnly: Bool
    /// An audio-only room whose programme still has a picture: everyone's card on the canvas (a voice room's
    /// picture, as voice-room apps show it). Set by giving an audio-only room a `canvas`.
    public var voicePicture = false
    /// Whether the programme has video: a room with cameras, or a voice room with a picture.
    public var hasPicture: Bool { !audioOnly || voicePicture }
    public var maxParticipants: Int
    public var canvas: Canvas
    public var video: Video
    public var audio: Audio
    public var layout: Layout
    public var outputs: [OutputSpec]
    /// How often each output's `output_status` event (and its metrics) is published.
    public var statusIntervalMs: Int = 3000
    /// The most a participant may send, audio and video together (kbit/s): the REMB Cohost sends its WebRTC
    /// participants never exceeds it.
    public var maxIngestBitrate: Int = 2500
    /// The user a pip layout puts full-canvas when the layout names none; nil = the first admin to join,
    /// else the first participant.
    public var anchor: String?
    /// Background, placeholder and watermark pictures (none by default).
    public var images = RoomImages()
    /// The largest picture a participant may send, in either orientation: larger ones are not decoded.
    public var maxVideoSize = Size(width: 1920, height: 1080)
    /// The room view sent back to participants who receive video; nil: none (`"returnVideo": "none"`).
    public var returnVideo: ReturnVideo?

    /// The room view: the canvas scaled into this size (letterboxed when the aspect differs), encoded at this rate.
    public struct ReturnVideo: Sendable, Equatable, Encodable {
        public var width: Int
        public var height: Int
        public var fps: Int
        /// kbit/s: the encoder's ceiling; receivers' reports may hold it lower.
        public var bitrate: Int

        /// 15 fps (the canvas's rate when lower), 500 kbit/s, the canvas's aspect with its longer side 640
        /// (640×360 for a 16:9 canvas) and the shorter at least 64, the least `RoomLimits` takes: a room that
        /// leaves `returnVideo` out must not be refused for it, whatever its canvas.
        public static func defaults(canvasWidth: Int, canvasHeight: Int, canvasFps: Int) -> ReturnVideo {
            let long = 640
            let fps = max(1, min(15, canvasFps))
            func even(_ v: Int) -> Int { max(RoomLimits.returnVideoSide.lowerBound, v / 2 * 2) }
            if canvasWidth >= canvasHeight {
                return ReturnVideo(
                    width: long, height: even(long * canvasHeight / max(1, canvasWidth)), fps: fps, bitrate: 500)
            }
            return ReturnVideo(
                width: even(long * canvasWidth / max(1, canvasHeight)), height: long, fps: fps, bitrate: 500)
        }
    }

    public struct Size: Sendable, Equatable, Codable {
        public var width: Int
        public var height: Int
        public init(width: Int, height: Int) {
            self.width = width
            self.height = height
        }
    }

    public struct Canvas: Sendable, Equatable {
        public var width: Int
        public var height: Int
        public var fps: Int
        public var background: String
        public var placeholder: String
        /// How long a stalled participant's last picture stays before the placeholder replaces it.
        public var holdMs: Int = 1000
    }
    public struct Video: Sendable, Equatable {
        /// The target bitrate; with `adaptiveBitrate` the encoder runs at or below it.
        public var bitrateKbps: Int
        public var keyintSeconds: Int
        public var profile: H264Profile
        /// Lower the bitrate while the connected outputs' queues back up (see `AdaptiveBitrateController`).
        public var adaptiveBitrate = false
        /// The floor for `adaptiveBitrate`.
        public var minBitrateKbps = 500
        /// Encode fewer canvases (down to 10 fps) under queue pressure (see `FrameRateController`).
        public var dynamicFps = false
    }
    public struct Audio: Sendable, Equatable {
        public var bitrateKbps: Int
        public var channels: Int
    }

    /// The server's defaults for rooms created implicitly by a join.
    public static func defaults(name: String) -> RoomConfig {
        var config = RoomConfig(
            name: name, audioOnly: false, maxParticipants: 16,
            canvas: Canvas(width: 1280, height: 720, fps: 30, background: "#000000", placeholder: "#303030"),
            video: Video(bitrateKbps: 2000, keyintSeconds: 2, profile: .high),
            audio: Audio(bitrateKbps: 128, channels: 2),
            layout: .grid, outputs: [])
        config.returnVideo = .defaults(canvasWidth: 1280, canvasHeight: 720, canvasFps: 30)
        return config
    }

    public var backgroundColor: YUVColor { YUVColor(hex: canvas.background) ?? .black }
    public var placeholderColor: YUVColor { YUVColor(hex: canvas.placeholder) ?? .black }

    /// The room's adaptive controllers, as enabled in `video` (none for audio-only rooms).
    public var adaptation: StreamAdaptation {
        guard hasPicture else { return StreamAdaptation(bitrate: nil, frameRate: nil) }
        return StreamAdaptation(
            bitrate: video.adaptiveBitrate
                ? AdaptiveBitrateController(targetKbps: video.bitrateKbps, minKbps: video.minBitrateKbps) : nil,
            frameRate: video.dynamicFps ? FrameRateController(canvasFps: canvas.fps) : nil)
    }

    public var h264Config: H264EncoderConfig {
        H264EncoderConfig(
            width: canvas.width, height: canvas.height, fps: canvas.fps,
            bitrateKbps: video.bitrateKbps, keyintFrames: canvas.fps * video.keyintSeconds,
            profile: video.profile)
    }
}
