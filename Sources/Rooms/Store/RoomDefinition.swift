import Foundation
import Layout
import CohostAPI

/// A room's definition as stored: the body of `POST /v1/rooms` with every field explicit, so a restored room is
/// created through the same checks as a new one and comes back exactly as it was (its current layout, anchor,
/// pictures and outputs, not only those it was created with).
public struct RoomDefinition: Encodable, Sendable {
    var name: String
    var audioOnly: Bool
    var maxParticipants: Int
    /// Left out of an audio-only room without a picture: a canvas given to one makes it a voice room with a picture.
    var canvas: Canvas?
    /// A voice room with a picture says so: an audio-only definition stored before voice rooms could have one always
    /// carried a canvas, and must come back without a picture.
    var picture: Bool?
    var video: Video
    var audio: Audio
    var layout: Layout
    var outputs: [Output]
    var statusIntervalMs: Int
    var maxIngestBitrate: Int
    var anchor: String?
    var watermark: Watermark?
    var maxVideoSize: RoomConfig.Size
    /// `"none"`, or the view's four fields, as the room view shows it.
    var returnVideo: RoomInfo.ReturnVideoInfo

    struct Canvas: Encodable {
        var width, height, fps: Int
        var background, placeholder: String
        var holdMs: Int
        var backgroundImage, placeholderImage: String?
    }
    struct Video: Encodable {
        var bitrate, keyint: Int
        var profile: String
        var adaptiveBitrate: Bool
        var minBitrate: Int
        var dynamicFps: Bool
    }
    struct Audio: Encodable { var bitrate, channels: Int }
    struct Output: Encodable {
        struct Backoff: Encodable { var initialMaxMs, maxMs: Int }
        var url: String?
        var queueMs: Int
        var maxRetries: Int?
        var backoff: Backoff
        var interleave: String
        // An HLS output's settings (decoded by `OutputRequest` like a POST's).
        var kind: String?
        var segmentSeconds: Double?
        var partSeconds: Double?
        var windowSegments: Int?
        var `public`: Bool?
        var vod: Bool?
    }
    struct Watermark: Encodable {
        var image: String
        var x, y, width, height: Int
        var opacity: Double
    }
    public init(_ config: RoomConfig) {
        name = config.name
        audioOnly = config.audioOnly
        maxParticipants = config.maxParticipants
        picture = config.voicePicture ? true : nil
        canvas =
            !config.hasPicture
            ? nil
            : Canvas(
                width: config.canvas.width, height: config.canvas.height, fps: config.canvas.fps,
                background: config.canvas.background, placeholder: config.canvas.placeholder,
                holdMs: config.canvas.holdMs,
                backgroundImage: config.images.background.map { Data($0.png).base64EncodedString() },
                placeholderImage: config.images.placeholder.map { Data($0.png).base64EncodedString() })
        video = Video(
            bitrate: config.video.bitrateKbps, keyint: config.video.keyintSeconds,
            profile: config.video.profile.rawValue, adaptiveBitrate: config.video.adaptiveBitrate,
            minBitrate: config.video.minBitrateKbps, dynamicFps: config.video.dynamicFps)
        audio = Audio(bitrate: config.audio.bitrateKbps, channels: config.audio.channels)
        layout = config.layout
        outputs = config.outputs.map {
            Output(
                url: $0.hls == nil ? $0.url : nil, queueMs: $0.options.queueLimitMs, maxRetries: $0.options.maxRetries,
                backoff: .init(initialMaxMs: $0.options.backoff.initialMaxMs, maxMs: $0.options.backoff.maxMs),
                interleave: $0.options.interleave.rawValue, kind: $0.hls == nil ? nil : "hls",
                segmentSeconds: $0.hls?.segmentSeconds, partSeconds: $0.hls.map { $0.partSeconds ?? 0 },
                windowSegments: $0.hls?.windowSegments, public: $0.hls?.isPublic, vod: $0.hls?.vod)
        }
        statusIntervalMs = config.statusIntervalMs
        maxIngestBitrate = config.maxIngestBitrate
        anchor = config.anchor
        watermark = config.images.watermark.map {
            Watermark(
                image: Data($0.image.png).base64EncodedString(), x: $0.rect.x, y: $0.rect.y,
                width: $0.rect.width, height: $0.rect.height, opacity: $0.opacity)
        }
        maxVideoSize = config.maxVideoSize
        returnVideo = RoomInfo.ReturnVideoInfo(config.returnVideo)
    }

    /// The JSON stored.
    public var json: Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Every field is a plain value: encoding cannot fail.
        return (try? encoder.encode(self)) ?? Data()
    }

    /// The stored JSON back into a configuration, through the same checks as `POST /v1/rooms`.
    public static func config(from json: Data) throws(RoomError) -> RoomConfig {
        var request: RoomConfigRequest
        do { request = try JSONDecoder().decode(RoomConfigRequest.self, from: json) } catch {
            throw .badRequest("invalid_json", "the stored definition does not read: \(error)")
        }
        if request.audioOnly == true, !storedPicture(json) { request.canvas = nil }
        return try request.resolve()
    }

    /// Whether a stored definition marks a voice room with a picture (`"picture": true`).
    private static func storedPicture(_ json: Data) -> Bool {
        struct Mark: Decodable { var picture: Bool? }
        return (try? JSONDecoder().decode(Mark.self, from: json))?.picture == true
    }
}
