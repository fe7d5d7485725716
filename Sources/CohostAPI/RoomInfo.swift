import Layout

/// The JSON of `GET /v1/rooms/{room}`, of the 201 after `POST /v1/rooms` and of each room in `GET /v1/rooms`
/// (protocol/openapi.yaml `Room`): the room's settings, who is in it with their streams' counters, and its outputs.
/// The server encodes it; the command line and the load tester decode it.
public struct RoomInfo: Codable, Sendable {
    public struct CanvasInfo: Codable, Sendable {
        public var width, height, fps: Int
        public var background, placeholder: String
        public var holdMs: Int
        public var backgroundImage: ImageInfo?, placeholderImage: ImageInfo?

        public init(
            width: Int, height: Int, fps: Int, background: String, placeholder: String, holdMs: Int,
            backgroundImage: ImageInfo?, placeholderImage: ImageInfo?
        ) {
            self.width = width
            self.height = height
            self.fps = fps
            self.background = background
            self.placeholder = placeholder
            self.holdMs = holdMs
            self.backgroundImage = backgroundImage
            self.placeholderImage = placeholderImage
        }
    }

    /// A room picture as reported (never its bytes).
    public struct ImageInfo: Codable, Sendable, Equatable {
        public var width, height, bytes: Int
        public init(width: Int, height: Int, bytes: Int) {
            self.width = width
            self.height = height
            self.bytes = bytes
        }
    }

    public struct WatermarkInfo: Codable, Sendable {
        public var image: ImageInfo
        public var x, y, width, height: Int
        public var opacity: Double
        public init(image: ImageInfo, x: Int, y: Int, width: Int, height: Int, opacity: Double) {
            self.image = image
            self.x = x
            self.y = y
            self.width = width
            self.height = height
            self.opacity = opacity
        }
    }

    public struct VideoInfo: Codable, Sendable {
        public var bitrate: Int
        public var keyint: Int
        public var profile: String
        public var adaptiveBitrate: Bool
        public var minBitrate: Int
        public var dynamicFps: Bool
        public init(
            bitrate: Int, keyint: Int, profile: String, adaptiveBitrate: Bool, minBitrate: Int, dynamicFps: Bool
        ) {
            self.bitrate = bitrate
            self.keyint = keyint
            self.profile = profile
            self.adaptiveBitrate = adaptiveBitrate
            self.minBitrate = minBitrate
            self.dynamicFps = dynamicFps
        }
    }

    public struct AudioInfo: Codable, Sendable {
        public var bitrate: Int
        public var channels: Int
        public init(bitrate: Int, channels: Int) {
            self.bitrate = bitrate
            self.channels = channels
        }
    }

    public struct ParticipantInfo: Codable, Sendable {
        public var userId: String
        /// The display name (the token's `name`, or the one given at join); absent: the user id is shown.
        public var name: String?
        /// ISO 8601.
        public var joinedAt: String
        public var muted: Bool
        public var gain: Float
        /// Joined with an admin token.
        public var admin: Bool
        /// The last `voice_levels` value, 0…100.
        public var level: Int
        public var streams: [StreamReport]
        /// What Cohost sends the participant back (mix-minus audio, room view), with its receiver's reports.
        public var returns: [ReturnReport]
        /// Whether the participant says its camera and microphone are on.
        public var camera: Bool
        public var microphone: Bool
        /// The participant's streams others can get in their slots.
        public var sources: [String]
        /// Its receive slots: other participants' videos forwarded to it.
        public var slots: [SlotInfo]
        /// Others' streams none of its slots can carry (no codec in common).
        public var unforwardable: [StreamRef]

        public init(
            userId: String, joinedAt: String, muted: Bool, gain: Float, admin: Bool, level: Int,
            streams: [StreamReport], returns: [ReturnReport], camera: Bool = true, microphone: Bool = true,
            sources: [String] = [], slots: [SlotInfo] = [], unforwardable: [StreamRef] = [], name: String? = nil
        ) {
            self.name = name
            self.camera = camera
            self.microphone = microphone
            self.sources = sources
            self.slots = slots
            self.unforwardable = unforwardable
            self.userId = userId
            self.joinedAt = joinedAt
            self.muted = muted
            self.gain = gain
            self.admin = admin
            self.level = level
            self.streams = streams
            self.returns = returns
        }
    }

    public struct Size: Codable, Sendable, Equatable {
        public var width, height: Int
        public init(width: Int, height: Int) {
            self.width = width
            self.height = height
        }
    }

    /// The room view's settings, or the string "none" when the room sends none.
    public enum ReturnVideoInfo: Codable, Sendable, Equatable {
        public struct Settings: Codable, Sendable, Equatable {
            public var width, height, fps: Int
            /// kbit/s: the encoder's ceiling; receivers' reports may hold it lower.
            public var bitrate: Int
            public init(width: Int, height: Int, fps: Int, bitrate: Int) {
                self.width = width
                self.height = height
                self.fps = fps
                self.bitrate = bitrate
            }
        }
        case none
        case view(Settings)

        public init(from decoder: any Decoder) throws {
            let c = try decoder.singleValueContainer()
            if let word = try? c.decode(String.self) {
                guard word == "none" else {
                    throw DecodingError.dataCorruptedError(in: c, debugDescription: "expected \"none\" or an object")
                }
                self = .none
            } else {
                self = .view(try c.decode(Settings.self))
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.singleValueContainer()
            switch self {
            case .none: try c.encode("none")
            case .view(let settings): try c.encode(settings)
            }
        }
    }

    public var name: String
    public var audioOnly: Bool
    public var maxParticipants: Int
    public var canvas: CanvasInfo
    public var video: VideoInfo?
    public var audio: AudioInfo
    public var layout: Layout
    /// The room's configured anchor (`anchor`), and who a pip layout shows full-canvas now (`pipAnchor`).
    public var anchor: String?
    public var pipAnchor: String?
    public var activeSpeaker: String?
    public var watermark: WatermarkInfo?
    public var participants: [ParticipantInfo]
    public var outputs: [OutputInfo]
    /// The room's pulled sources (absent when it has none).
    public var sources: [SourceInfo]?
    /// WHEP viewers watching the programme now (the server always sends it).
    public var viewers: Int?
    public var statusIntervalMs: Int
    public var maxIngestBitrate: Int
    public var maxVideoSize: Size
    public var returnVideo: ReturnVideoInfo

    public init(
        name: String, audioOnly: Bool, maxParticipants: Int, canvas: CanvasInfo, video: VideoInfo?, audio: AudioInfo,
        layout: Layout, anchor: String?, pipAnchor: String?, activeSpeaker: String?, watermark: WatermarkInfo?,
        participants: [ParticipantInfo], outputs: [OutputInfo], statusIntervalMs: Int, maxIngestBitrate: Int,
        maxVideoSize: Size, returnVideo: ReturnVideoInfo
    ) {
        self.name = name
        self.audioOnly = audioOnly
        self.maxParticipants = maxParticipants
        self.canvas = canvas
        self.video = video
        self.audio = audio
        self.layout = layout
        self.anchor = anchor
        self.pipAnchor = pipAnchor
        self.activeSpeaker = activeSpeaker
        self.watermark = watermark
        self.participants = participants
        self.outputs = outputs
        self.statusIntervalMs = statusIntervalMs
        self.maxIngestBitrate = maxIngestBitrate
        self.maxVideoSize = maxVideoSize
        self.returnVideo = returnVideo
    }
}

/// The JSON of `GET /v1/rooms`.
public struct RoomList: Codable, Sendable {
    public var rooms: [RoomInfo]
    public init(rooms: [RoomInfo]) { self.rooms = rooms }
}
