import Foundation
import Mixing

/// The JSON of `GET /v1/rooms/{room}` and of the 201 after `POST /v1/rooms`.
public struct RoomInfo: Encodable, Sendable {
    public struct CanvasInfo: Encodable, Sendable { var width, height, fps: Int; var background, placeholder: String; var holdMs: Int }
    public struct VideoInfo: Encodable, Sendable { var bitrate: Int; var keyint: Int; var profile: String }
    public struct AudioInfo: Encodable, Sendable { var bitrate: Int; var channels: Int }
    public struct ParticipantInfo: Encodable, Sendable {
        var userId: String
        var joinedAt: String
        var muted: Bool
        var gain: Float
        var streams: [StreamReport]
    }
    public struct OutputInfo: Encodable, Sendable {
        public var id: String, url: String, state: String
        public var sentBytes: Int, droppedVideoTags: Int, droppedAudioTags: Int
    }

    var name: String
    var audioOnly: Bool
    var maxParticipants: Int
    var canvas: CanvasInfo
    var video: VideoInfo?
    var audio: AudioInfo
    var layout: Layout
    var participants: [ParticipantInfo]
    var outputs: [OutputInfo]

    public init(_ room: Room) {
        let c = room.config
        name = c.name
        audioOnly = c.audioOnly
        maxParticipants = c.maxParticipants
        canvas = CanvasInfo(width: c.canvas.width, height: c.canvas.height, fps: c.canvas.fps, background: c.canvas.background,
                            placeholder: c.canvas.placeholder, holdMs: c.canvas.holdMs)
        video = c.audioOnly ? nil : VideoInfo(bitrate: c.video.bitrateKbps, keyint: c.video.keyintSeconds, profile: c.video.profile.rawValue)
        audio = AudioInfo(bitrate: c.audio.bitrateKbps, channels: c.audio.channels)
        layout = room.currentLayout
        let formatter = ISO8601DateFormatter()
        participants = room.participants.map { p in
            ParticipantInfo(userId: p.userId, joinedAt: formatter.string(from: p.joinedAt), muted: p.muted, gain: p.gain,
                            streams: p.reports())
        }
        outputs = room.outputs
    }
}
