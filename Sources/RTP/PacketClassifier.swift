/// What a datagram on a shared RTP/RTCP port is (RFC 5761 §4).
public enum PacketKind: Equatable, Sendable {
    case rtp, rtcp, invalid
}

/// Tells RTP from RTCP on one port.
///
/// RFC 5761 §4: RTCP packet types 192...223 land on RTP payload types 64...95 with the marker bit set,
/// a range RTP/AVP never assigns, so the second byte decides. Version must be 2; anything shorter than
/// the smaller of the two fixed headers (RTCP 8 bytes, RTP 12 bytes) is invalid.
public func classifyPacket(_ bytes: [UInt8]) -> PacketKind {
    guard bytes.count >= 2, bytes[0] >> 6 == 2 else { return .invalid }
    if (192...223).contains(bytes[1]) {
        return bytes.count >= 8 ? .rtcp : .invalid
    }
    return bytes.count >= 12 ? .rtp : .invalid
}
