import Foundation
import Forwarding
import Publishing

/// Why a participant left (protocol/events.schema.json).
public enum LeaveReason: String, Sendable, Codable {
    case left, kicked, timeout, replaced, roomClosed = "room_closed"
    /// A pulled source played to its end, or failed for good.
    case ended
}

/// One participant's voice level in a `voice_levels` event.
public struct VoiceLevel: Sendable, Equatable {
    public var userId: String
    /// 0…100, linear in dBov from −60 to 0 (protocol/events.schema.json).
    public var level: Int
    public init(userId: String, level: Int) {
        self.userId = userId
        self.level = level
    }
}

/// One room event; `json` is the exact text sent on the events WebSocket and to webhooks.
public enum RoomEvent: Sendable, Equatable {
    /// `sources`: the streams others' slots can show (camera, screen).
    case participantJoined(userId: String, sources: [String] = [], name: String? = nil)
    case participantLeft(userId: String, reason: LeaveReason)
    case participantKicked(userId: String, by: String)
    case firstVideoFrame(userId: String, width: Int, height: Int)
    /// An output's state changed; `attempt` is 0 for the first connection, k for the k-th retry.
    case outputState(output: String, url: String, state: String, attempt: Int, error: String?)
    /// An output's rates over the last status interval; `bitrate` is the encoder's current target (kbps).
    case outputStatus(output: String, url: String, status: OutputStatus, bitrate: Int)
    case roomClosed
    /// Every participant's level 0…100 (join order) and the active speaker, every 200 ms.
    case voiceLevels([VoiceLevel], activeSpeaker: String?)
    /// The active speaker changed (300 ms of lead, see `ActiveSpeakerDetector`).
    case activeSpeaker(userId: String)
    /// What a receiver's slots show changed (docs/forwarding.md).
    case slots(userId: String, slots: [SlotAssignment])
    /// A participant said its camera or microphone is on or off.
    case participantUpdated(userId: String, camera: Bool, microphone: Bool)
    /// Which simulcast layers of a participant's camera or screen share are needed (`active`) and which it should
    /// stop sending (`paused`): applied by the sender (web/cohost.js) with `RTCRtpSender.setParameters`.
    case layers(userId: String, source: String, active: [String], paused: [String])
    /// A pulled source's state changed (`url` without credentials); `attempt` is k for the k-th retry.
    case sourceState(userId: String, url: String, state: String, attempt: Int, error: String?)
    /// A participant's tracks began to be recorded into `file` (in the recordings directory).
    case recordingStarted(recording: String, userId: String, source: String, file: String)
    /// A participant's recording ended: `reason` stopped (DELETE), left (the participant), room_closed or error.
    case recordingStopped(
        recording: String, userId: String, source: String, file: String, reason: String, bytes: Int, durationMs: Int,
        error: String?)

    /// Events too frequent for webhooks (5 a second per room): they go to the events WebSocket only.
    public var isHighRate: Bool { if case .voiceLevels = self { true } else { false } }

    public var type: String {
        switch self {
        case .participantJoined: "participant_joined"
        case .participantLeft: "participant_left"
        case .participantKicked: "participant_kicked"
        case .firstVideoFrame: "first_video_frame"
        case .outputState: "output_state"
        case .outputStatus: "output_status"
        case .roomClosed: "room_closed"
        case .voiceLevels: "voice_levels"
        case .activeSpeaker: "active_speaker"
        case .slots: "slots"
        case .participantUpdated: "participant_updated"
        case .layers: "layers"
        case .sourceState: "source_state"
        case .recordingStarted: "recording_started"
        case .recordingStopped: "recording_stopped"
        }
    }

    /// Encodes with `type`, `room` and `time` (RFC 3339 UTC, milliseconds) first, fields of the event after.
    public func json(room: String, time: Date) -> String {
        var payload = Payload(type: type, room: room, time: Self.timeStyle.format(time))
        switch self {
        case let .participantJoined(userId, sources, name):
            payload.userId = userId
            payload.sources = sources.isEmpty ? nil : sources
            payload.name = name
        case let .participantLeft(userId, reason):
            payload.userId = userId
            payload.reason = reason.rawValue
        case let .participantKicked(userId, by):
            payload.userId = userId
            payload.by = by
        case let .firstVideoFrame(userId, width, height):
            payload.userId = userId
            payload.width = width
            payload.height = height
        case let .outputState(output, url, state, attempt, error):
            payload.output = output
            payload.url = url
            payload.state = state
            payload.attempt = attempt
            payload.error = error
        case let .outputStatus(output, url, status, bitrate):
            payload.output = output
            payload.url = url
            payload.bitrate = bitrate
            payload.videoFps = status.videoFps
            payload.audioFps = status.audioFps
            payload.kbps = status.kbps
            payload.droppedVideoFrames = status.droppedVideoFrames
            payload.droppedAudioFrames = status.droppedAudioFrames
            payload.queueMs = status.queueMs
        case .roomClosed: break
        case let .voiceLevels(levels, speaker):
            payload.levels = Dictionary(levels.map { ($0.userId, $0.level) }, uniquingKeysWith: { first, _ in first })
            payload.activeSpeaker = speaker
        case let .activeSpeaker(userId): payload.userId = userId
        case let .slots(userId, slots):
            payload.userId = userId
            payload.slots = slots.map {
                SlotPayload(mid: $0.mid, userId: $0.shown?.userId, source: $0.shown?.source.rawValue)
            }
        case let .participantUpdated(userId, camera, microphone):
            payload.userId = userId
            payload.camera = camera
            payload.microphone = microphone
        case let .layers(userId, source, active, paused):
            payload.userId = userId
            payload.source = source
            payload.active = active
            payload.paused = paused
        case let .sourceState(userId, url, state, attempt, error):
            payload.userId = userId
            payload.url = url
            payload.state = state
            payload.attempt = attempt
            payload.error = error
        case let .recordingStarted(recording, userId, source, file):
            payload.recording = recording
            payload.userId = userId
            payload.source = source
            payload.file = file
        case let .recordingStopped(recording, userId, source, file, reason, bytes, durationMs, error):
            payload.recording = recording
            payload.userId = userId
            payload.source = source
            payload.file = file
            payload.reason = reason
            payload.bytes = bytes
            payload.durationMs = durationMs
            payload.error = error
        }
        // Encoding a struct of strings and numbers (all finite) cannot fail.
        return (try? String(decoding: Self.encoder.encode(payload), as: UTF8.self)) ?? "{}"
    }

    private struct Payload: Encodable {
        var type: String
        var room: String
        var time: String
        var userId: String?
        var name: String?
        var reason: String?
        var by: String?
        var width: Int?
        var height: Int?
        var output: String?
        var url: String?
        var state: String?
        var attempt: Int?
        var error: String?
        var videoFps: Double?
        var audioFps: Double?
        var kbps: Int?
        var droppedVideoFrames: Int?
        var droppedAudioFrames: Int?
        var queueMs: Int?
        var bitrate: Int?
        var levels: [String: Int]?
        var activeSpeaker: String?
        var slots: [SlotPayload]?
        var sources: [String]?
        var camera: Bool?
        var microphone: Bool?
        var source: String?
        var active: [String]?
        var paused: [String]?
        var recording: String?
        var file: String?
        var bytes: Int?
        var durationMs: Int?
    }

    /// A slot showing nobody has neither `userId` nor `source`.
    private struct SlotPayload: Encodable {
        var mid: String
        var userId: String?
        var source: String?
    }

    /// One encoder for every event (made once, not per event; never reconfigured, so shared safely).
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// A value, not a shared `ISO8601DateFormatter` (a class that is not thread-safe on Linux): events are stamped
    /// on many threads at once.
    static let timeStyle = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
}
