/// Base64url without padding (RFC 7515 §2), strict: the JWS compact form allows nothing else.
enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    static func encode<Bytes: Sequence<UInt8>>(_ input: Bytes) -> String {
        let bytes = Array(input)
        var out = [UInt8]()
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var i = 0
        while i < bytes.count {
            let b0 = bytes[i]
            let b1: UInt8 = i + 1 < bytes.count ? bytes[i + 1] : 0
            let b2: UInt8 = i + 2 < bytes.count ? bytes[i + 2] : 0
            out.append(alphabet[Int(b0 >> 2)])
            out.append(alphabet[Int((b0 & 0x03) << 4 | b1 >> 4)])
            if i + 1 < bytes.count { out.append(alphabet[Int((b1 & 0x0F) << 2 | b2 >> 6)]) }
            if i + 2 < bytes.count { out.append(alphabet[Int(b2 & 0x3F)]) }
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes, or returns nil for padding, characters outside the url-safe alphabet, an impossible
    /// length, or non-zero unused trailing bits (which would give one value two spellings).
    static func decode(_ text: Substring) -> [UInt8]? {
        let chars = text.utf8
        guard chars.count % 4 != 1 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(chars.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for c in chars {
            guard let v = value(of: c) else { return nil }
            accumulator = accumulator << 6 | UInt32(v)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        guard accumulator == 0 else { return nil }
        return out
    }

    private static func value(of c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): c - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): c - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"): 62
        case UInt8(ascii: "_"): 63
        default: nil
        }
    }
}
