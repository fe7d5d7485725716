import DTLS
import Publishing

/// Server-wide settings the rooms need.
public struct RoomSettings: Sendable {
    public var publicIP: String
    public var rtpPort: Int
    public var participantTimeoutMs: Int64
    public var maxRooms: Int
    /// A room with nobody in it for this long closes by itself (as `DELETE /v1/rooms/{room}` does); 0 = never.
    public var emptyRoomTimeoutMs: Int64
    /// Receivers of every room's events besides the WebSockets (webhooks).
    public var eventSinks: [any RoomEventSink]
    /// Whether a participant token's join creates a room that does not exist (admins create rooms either way).
    public var autoCreateRooms: Bool
    /// The longest token lifetime accepted; a kick is remembered this long after it, whether or not its room lives.
    public var maxTokenTTLSeconds: Int64
    /// Where outputs may write and push.
    public var outputRules: OutputRules
    /// What each room's recordings may write since it opened (bytes, charged to the directory's quota too); 0: no
    /// quota per room.
    public var roomRecordingsMaxBytes: Int64 = 0
    /// Decoder CPU time a second one participant's video may use (`DecodeBudget`).
    public var decodeBudgetMs: Int64
    /// Threads decoding video (`DecodePool`).
    public var decodeThreads: Int
    /// Cohost's DTLS identity and candidate addresses; nil refuses WebRTC offers (415 `unsupported_transport`).
    public var webRTC: WebRTCSettings?
    /// What pulled sources may read, and how many may run.
    public var sourceRules = SourceRules()
    /// WHEP viewers a room takes at once (`max_viewers`).
    public var maxViewersPerRoom = 100
    /// STUN and TURN servers handed to clients (`turn_urls`, `turn_secret`, `stun_url`).
    public var iceServers = ICEServers()

    public init(
        publicIP: String = "127.0.0.1", rtpPort: Int = 7882, participantTimeoutMs: Int64 = 10_000, maxRooms: Int = 100,
        emptyRoomTimeoutMs: Int64 = 300_000, eventSinks: [any RoomEventSink] = [], autoCreateRooms: Bool = true,
        maxTokenTTLSeconds: Int64 = 86_400, outputRules: OutputRules = OutputRules(), decodeBudgetMs: Int64 = 500,
        decodeThreads: Int? = nil
    ) {
        self.publicIP = publicIP
        self.rtpPort = rtpPort
        self.participantTimeoutMs = participantTimeoutMs
        self.maxRooms = maxRooms
        self.emptyRoomTimeoutMs = emptyRoomTimeoutMs
        self.eventSinks = eventSinks
        self.autoCreateRooms = autoCreateRooms
        self.maxTokenTTLSeconds = maxTokenTTLSeconds
        self.outputRules = outputRules
        self.decodeBudgetMs = decodeBudgetMs
        self.decodeThreads = decodeThreads ?? DecodePool.defaultThreads
    }
}

/// What every WebRTC answer shares: the DTLS context (Cohost's certificate) and the host candidates' addresses.
public struct WebRTCSettings: Sendable {
    public var context: DTLSContext
    public var addresses: [String]
    /// The ICE-TCP port (RFC 6544, passive candidates beside the UDP ones); nil offers none.
    public var tcpPort: Int?

    public init(context: DTLSContext, addresses: [String], tcpPort: Int? = nil) {
        self.context = context
        self.addresses = addresses
        self.tcpPort = tcpPort
    }
}
