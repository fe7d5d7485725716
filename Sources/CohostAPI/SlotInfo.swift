/// One participant's stream as slots, subscriptions and events name it: whose, and which (`camera`, `screen`).
public struct StreamRef: Codable, Sendable, Equatable, Hashable {
    public var userId: String
    public var source: String

    public init(userId: String, source: String) {
        self.userId = userId
        self.source = source
    }
}

/// One receive slot of a participant in the room's JSON (protocol/openapi.yaml `Slot`): what it shows and what
/// it sent. `userId` and `source` are absent when it shows nobody.
public struct SlotInfo: Codable, Sendable, Equatable {
    public var mid: String
    public var userId: String?
    public var source: String?
    /// The codecs its line takes (`VP8`, `H264/42c` for constrained baseline, …).
    public var codecs: [String]
    /// Not sent: the receiver's REMB or loss says it cannot take the stream now.
    public var paused: Bool
    public var packets: Int
    public var bytes: Int
    /// What was sent over the last second, bit/s.
    public var bitrate: Int
    public var retransmitted: Int
    public var nacksReceived: Int
    public var keyframeRequests: Int
    /// Streams shown since the slot opened (each switch starts one).
    public var switches: Int
    public var roundTripMs: Int?
    public var lossPercent: Int
    public var estimatedBitrate: Int?
    /// Of a simulcast stream: the layer (RID) sent now, and the one the slot moves to at its next keyframe.
    public var rid: String?
    public var nextRid: String?

    public init(
        mid: String, userId: String?, source: String?, codecs: [String], paused: Bool, packets: Int, bytes: Int,
        bitrate: Int, retransmitted: Int, nacksReceived: Int, keyframeRequests: Int, switches: Int,
        roundTripMs: Int?, lossPercent: Int, estimatedBitrate: Int?
    ) {
        self.mid = mid
        self.userId = userId
        self.source = source
        self.codecs = codecs
        self.paused = paused
        self.packets = packets
        self.bytes = bytes
        self.bitrate = bitrate
        self.retransmitted = retransmitted
        self.nacksReceived = nacksReceived
        self.keyframeRequests = keyframeRequests
        self.switches = switches
        self.roundTripMs = roundTripMs
        self.lossPercent = lossPercent
        self.estimatedBitrate = estimatedBitrate
    }
}

/// `GET` and `PUT /v1/rooms/{room}/participants/{userId}/subscriptions`: what each slot shows now, and the
/// participant's own choices (slots absent from `chosen` are filled automatically).
public struct Subscriptions: Codable, Sendable, Equatable {
    public struct Slot: Codable, Sendable, Equatable {
        public var mid: String
        public var userId: String?
        public var source: String?
        /// The largest picture the receiver wants in this slot (its tile's size): a simulcast sender's layer that
        /// covers it is sent, not a larger one.
        public var maxWidth: Int?
        public var maxHeight: Int?

        public init(mid: String, userId: String?, source: String?, maxWidth: Int? = nil, maxHeight: Int? = nil) {
            self.mid = mid
            self.userId = userId
            self.source = source
            self.maxWidth = maxWidth
            self.maxHeight = maxHeight
        }
    }

    public var slots: [Slot]
    public var chosen: [Slot]

    public init(slots: [Slot], chosen: [Slot]) {
        self.slots = slots
        self.chosen = chosen
    }
}
