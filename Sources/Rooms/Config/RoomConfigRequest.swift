import Codecs
import Media
import Layout

/// The JSON body of `POST /v1/rooms`: every field optional, resolved against the defaults.
public struct RoomConfigRequest: Decodable, Sendable {
    public var name: String?
    public var audioOnly: Bool?
    public var maxParticipants: Int?
    public var canvas: CanvasRequest?
    public var video: VideoRequest?
    public var audio: AudioRequest?
    public var layout: Layout?
    public var outputs: [OutputRequest]?
    /// Milliseconds between `output_status` events.
    public var statusIntervalMs: Int?
    public var maxIngestBitrate: Int?
    /// The pip layout's full-canvas user when the layout names none.
    public var anchor: String?
    /// A PNG over every tile.
    public var watermark: WatermarkRequest?
    /// The largest picture a participant may send (either orientation).
    public var maxVideoSize: RoomConfig.Size?
    /// The room view sent back to participants: `"none"`, or any of its fields.
    public var returnVideo: ReturnVideoRequest?

    public enum ReturnVideoRequest: Decodable, Sendable {
        case none
        case view(width: Int?, height: Int?, fps: Int?, bitrate: Int?)

        private enum Keys: String, CodingKey { case width, height, fps, bitrate }

        public init(from decoder: any Decoder) throws {
            if let text = try? decoder.singleValueContainer().decode(String.self) {
                guard text == "none" else {
                    throw DecodingError.dataCorrupted(
                        .init(
                            codingPath: decoder.codingPath,
                            debugDescription: "returnVideo must be \"none\" or an object"))
                }
                self = .none
                return
            }
            let c = try decoder.container(keyedBy: Keys.self)
            self = .view(
                width: try c.decodeIfPresent(Int.self, forKey: .width),
                height: try c.decodeIfPresent(Int.self, forKey: .height),
                fps: try c.decodeIfPresent(Int.self, forKey: .fps),
                bitrate: try c.decodeIfPresent(Int.self, forKey: .bitrate))
        }
    }

    public struct CanvasRequest: Decodable, Sendable {
        public var width: Int?, height: Int?, fps: Int?
        public var background: String?, placeholder: String?
        public var holdMs: Int?
        /// Base64 PNGs: under every tile (cover), and inside placeholders (contain).
        public var backgroundImage: String?, placeholderImage: String?
    }
    public struct VideoRequest: Decodable, Sendable {
        public var preset: String?
        public var bitrate: Int?
        public var keyint: Int?
        public var profile: String?
        public var adaptiveBitrate: Bool?
        /// kbps; defaults to a quarter of the bitrate (at least 64).
        public var minBitrate: Int?
        public var dynamicFps: Bool?
    }
    public struct AudioRequest: Decodable, Sendable {
        public var preset: String?
        public var bitrate: Int?
        public var channels: Int?
    }
    public init(name: String) { self.name = name }

    /// Applies presets, then explicit fields, then checks every limit; the first violation is the error.
    public func resolve(defaultName: String? = nil) throws(RoomError) -> RoomConfig {
        guard let name = name ?? defaultName else { throw .badRequest("invalid_room", "room name is required") }
        guard Identifier.isValid(name) else {
            throw .badRequest("invalid_room", "room name must match [A-Za-z0-9_.-]{1,64}")
        }
        var config = RoomConfig.defaults(name: name)
        if let audioOnly { config.audioOnly = audioOnly }
        config.voicePicture = config.audioOnly && canvas != nil
        if let maxParticipants { config.maxParticipants = maxParticipants }
        if let preset = video?.preset {
            guard let p = QualityPreset.video[preset] else {
                throw .badRequest(
                    "invalid_preset",
                    "unknown video preset '\(preset)'; known: \(QualityPreset.video.keys.sorted().joined(separator: ", "))"
                )
            }
            config.canvas.width = p.width
            config.canvas.height = p.height
            config.canvas.fps = p.fps
            config.video.bitrateKbps = p.bitrateKbps
            config.video.profile = p.profile
        }
        if let preset = audio?.preset {
            guard let kbps = QualityPreset.audio[preset] else {
                throw .badRequest(
                    "invalid_preset",
                    "unknown audio preset '\(preset)'; known: \(QualityPreset.audio.keys.sorted().joined(separator: ", "))"
                )
            }
            config.audio.bitrateKbps = kbps
        }
        if let c = canvas {
            if let v = c.width { config.canvas.width = v }
            if let v = c.height { config.canvas.height = v }
            if let v = c.fps { config.canvas.fps = v }
            if let v = c.background { config.canvas.background = v }
            if let v = c.placeholder { config.canvas.placeholder = v }
            if let v = c.holdMs { config.canvas.holdMs = v }
        }
        if let v = video?.bitrate { config.video.bitrateKbps = v }
        if let v = video?.keyint { config.video.keyintSeconds = v }
        if let v = video?.profile {
            guard let p = H264Profile(rawValue: v) else {
                throw .badRequest("invalid_video", "video.profile must be baseline, main or high")
            }
            config.video.profile = p
        }
        config.video.minBitrateKbps =
            video?.minBitrate ?? max(RoomLimits.videoBitrateKbps.lowerBound, config.video.bitrateKbps / 4)
        if let v = video?.adaptiveBitrate { config.video.adaptiveBitrate = v }
        if let v = video?.dynamicFps { config.video.dynamicFps = v }
        if let v = statusIntervalMs { config.statusIntervalMs = v }
        if let v = maxIngestBitrate { config.maxIngestBitrate = v }
        if let v = audio?.bitrate { config.audio.bitrateKbps = v }
        if let v = audio?.channels { config.audio.channels = v }
        if let layout { config.layout = layout }
        if let maxVideoSize { config.maxVideoSize = maxVideoSize }
        config.returnVideo = RoomConfig.ReturnVideo.defaults(
            canvasWidth: config.canvas.width, canvasHeight: config.canvas.height, canvasFps: config.canvas.fps)
        switch returnVideo {
        case .none?: config.returnVideo = nil
        case .view(let width, let height, let fps, let bitrate)?:
            if let width { config.returnVideo?.width = width }
            if let height { config.returnVideo?.height = height }
            if let fps { config.returnVideo?.fps = fps }
            if let bitrate { config.returnVideo?.bitrate = bitrate }
        case nil: break
        }
        if let anchor {
            guard Identifier.isValid(anchor) else {
                throw .badRequest("invalid_room", "anchor must be a user id matching [A-Za-z0-9_.-]{1,64}")
            }
            config.anchor = anchor
        }
        if let outputs {
            guard outputs.count <= RoomLimits.maxOutputs else {
                throw .badRequest("limit_exceeded", "at most \(RoomLimits.maxOutputs) outputs per room")
            }
            config.outputs = []
            for output in outputs { config.outputs.append(try output.resolve()) }
            guard config.outputs.filter({ $0.hls != nil }).count <= 1 else {
                throw .badRequest("invalid_output", "a room has at most one HLS output")
            }
        }
        try RoomLimits.check(config)
        // Checked like every other field, then dropped: an audio-only room sends no room view.
        if config.audioOnly { config.returnVideo = nil }
        // Pictures last: decoding a PNG is the expensive part, so a body refused for anything else never gets here.
        if let v = canvas?.backgroundImage {
            config.images.background = try RoomImage(base64: v, field: "canvas.backgroundImage")
        }
        if let v = canvas?.placeholderImage {
            config.images.placeholder = try RoomImage(base64: v, field: "canvas.placeholderImage")
        }
        if let watermark {
            config.images.watermark = try watermark.resolve(
                canvasWidth: config.canvas.width, canvasHeight: config.canvas.height)
        }
        return config
    }
}

/// The mobile SDK's quality table (docs/configuration.md), by the same names.
public enum QualityPreset {
    public struct VideoPreset: Sendable {
        public let width, height, fps, bitrateKbps: Int
        public let profile: H264Profile
    }
    public static let video: [String: VideoPreset] = [
        "low1": .init(width: 272, height: 480, fps: 24, bitrateKbps: 128, profile: .baseline),
        "low2": .init(width: 272, height: 480, fps: 24, bitrateKbps: 256, profile: .baseline),
        "low3": .init(width: 272, height: 480, fps: 24, bitrateKbps: 512, profile: .baseline),
        "medium1": .init(width: 368, height: 640, fps: 24, bitrateKbps: 512, profile: .high),
        "medium2": .init(width: 368, height: 640, fps: 24, bitrateKbps: 768, profile: .high),
        "medium3": .init(width: 368, height: 640, fps: 24, bitrateKbps: 1024, profile: .high),
        "high1": .init(width: 720, height: 1280, fps: 24, bitrateKbps: 1024, profile: .high),
        "high2": .init(width: 720, height: 1280, fps: 24, bitrateKbps: 1280, profile: .high),
        "high3": .init(width: 720, height: 1280, fps: 24, bitrateKbps: 1536, profile: .high),
    ]
    public static let audio: [String: Int] = ["high1": 64, "high2": 96, "high3": 128]
}
