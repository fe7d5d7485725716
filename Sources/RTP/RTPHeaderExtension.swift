/// Reads one element of an RTP packet's header extension (RFC 8285) straight from the wire bytes, without parsing
/// the rest: SRTP leaves the header, extension included, in the clear, so a router can read a packet's MID
/// (RFC 9143 §15.1) before it knows which key decrypts it.
public enum RTPHeaderExtension {
    /// The value of element `id` in the one-byte (`0xBEDE`) or two-byte (`0x100x`) form; nil when the packet has no
    /// extension, has not that element, or is malformed.
    public static func element(_ id: UInt8, in packet: [UInt8]) -> ArraySlice<UInt8>? {
        guard id > 0, packet.count >= 12, packet[0] >> 6 == 2, packet[0] & 0x10 != 0 else { return nil }
        let start = 12 + 4 * Int(packet[0] & 0x0F)
        guard packet.count >= start + 4 else { return nil }
        let profile = UInt16(packet[start]) << 8 | UInt16(packet[start + 1])
        let words = Int(packet[start + 2]) << 8 | Int(packet[start + 3])
        let end = start + 4 + 4 * words
        guard packet.count >= end else { return nil }
        var at = start + 4
        if profile == 0xBEDE {
            while at < end {
                let byte = packet[at]
                if byte == 0 {  // padding
                    at += 1
                    continue
                }
                let elementID = byte >> 4
                if elementID == 15 { return nil }  // reserved: stop (RFC 8285 §4.2)
                let length = Int(byte & 0x0F) + 1
                guard at + 1 + length <= end else { return nil }
                if elementID == id { return packet[(at + 1)..<(at + 1 + length)] }
                at += 1 + length
            }
        } else if profile & 0xFFF0 == 0x1000 {
            while at < end {
                let elementID = packet[at]
                if elementID == 0 {
                    at += 1
                    continue
                }
                guard at + 2 <= end else { return nil }
                let length = Int(packet[at + 1])
                guard at + 2 + length <= end else { return nil }
                if elementID == id { return packet[(at + 2)..<(at + 2 + length)] }
                at += 2 + length
            }
        }
        return nil
    }
}
