/// Opus over RTP (RFC 7587 §4.2): each payload is exactly one Opus packet, so each RTP packet is a frame.
public struct OpusDepacketizer: Depacketizer {
    public init() {}

    /// An empty payload carries no TOC byte and is not an Opus packet (RFC 6716 §3.1): skipped.
    public mutating func push(_ packet: RTPPacket, afterLoss: Bool) -> EncodedFrame? {
        guard !packet.payload.isEmpty else { return nil }
        return EncodedFrame(
            data: packet.payload, rtpTimestamp: packet.timestamp, isKeyframe: true,
            precededByLoss: afterLoss)
    }
}
