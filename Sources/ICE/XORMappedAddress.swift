/// XOR-MAPPED-ADDRESS (RFC 8489 §14.2): the address a request came from, XORed with the magic cookie (and for IPv6
/// the transaction ID), so middleboxes rewriting addresses in payloads leave it alone.
public enum XORMappedAddress {
    /// The attribute value for an IPv4 address (host byte order) and port.
    public static func value(ipv4: UInt32, port: Int) -> [UInt8] {
        let xport = UInt16(truncatingIfNeeded: port) ^ UInt16(STUNMessage.magicCookie >> 16)
        let xaddress = ipv4 ^ STUNMessage.magicCookie
        var out: [UInt8] = [0, 0x01]
        STUNMessage.append16(&out, xport)
        STUNMessage.append32(&out, xaddress)
        return out
    }

    /// The attribute value for an IPv6 address (its 16 bytes, network order) and port.
    public static func value(ipv6 bytes: [UInt8], port: Int, transactionID: [UInt8]) -> [UInt8] {
        let xport = UInt16(truncatingIfNeeded: port) ^ UInt16(STUNMessage.magicCookie >> 16)
        var out: [UInt8] = [0, 0x02]
        STUNMessage.append16(&out, xport)
        var key: [UInt8] = []
        STUNMessage.append32(&key, STUNMessage.magicCookie)
        key += transactionID.prefix(12)
        for i in 0..<16 { out.append((i < bytes.count ? bytes[i] : 0) ^ (i < key.count ? key[i] : 0)) }
        return out
    }

    /// The address and port in an attribute value: `ipv4` in host byte order, or the 16 `ipv6` bytes; nil when
    /// malformed.
    public static func decode(_ value: [UInt8], transactionID: [UInt8]) -> (ipv4: UInt32?, ipv6: [UInt8]?, port: Int)? {
        guard value.count >= 8 else { return nil }
        let port = Int(STUNMessage.readUInt16(value, 2) ^ UInt16(STUNMessage.magicCookie >> 16))
        switch value[1] {
        case 0x01:
            return (STUNMessage.readUInt32(value, 4) ^ STUNMessage.magicCookie, nil, port)
        case 0x02 where value.count >= 20:
            var key: [UInt8] = []
            STUNMessage.append32(&key, STUNMessage.magicCookie)
            key += transactionID.prefix(12)
            guard key.count == 16 else { return nil }
            return (nil, (0..<16).map { value[4 + $0] ^ key[$0] }, port)
        default:
            return nil
        }
    }
}
