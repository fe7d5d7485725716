/// One stream Cohost sends a participant, as `GET /v1/rooms/{room}` shows it: what was sent, and what the
/// participant's receiver reports about it.
public struct ReturnReport: Sendable, Codable, Equatable {
    public var kind: String
    public var codec: String
    public var ssrc: UInt32
    public var packetsSent: Int
    public var bytesSent: Int
    /// The receiver's last report: loss in its last interval (percent), cumulative loss, jitter; absent before one.
    public var lossPercent: Int?
    public var cumulativeLost: Int?
    public var jitterMs: Double?
    /// From the receiver's reports (LSR/DLSR of Cohost's sender reports); absent until one echoed a report.
    public var roundTripMs: Int?
    /// Video: NACK packets and keyframe requests (PLI, FIR) received, packets resent, the receiver's last REMB
    /// (bit/s).
    public var nacksReceived: Int?
    public var keyframeRequests: Int?
    public var retransmitted: Int?
    public var estimatedBitrate: Int?

    /// What was sent; the receiver's side is filled in as it reports.
    public init(kind: String, codec: String, ssrc: UInt32, packetsSent: Int, bytesSent: Int) {
        self.kind = kind
        self.codec = codec
        self.ssrc = ssrc
        self.packetsSent = packetsSent
        self.bytesSent = bytesSent
    }
}
