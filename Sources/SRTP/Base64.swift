/// Standard base64 (RFC 4648 §4), the encoding of SDES `inline:` keys. Kept here so SRTP needs no Foundation.
enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Encodes with `=` padding.
    static func encode(_ bytes: [UInt8]) -> String {
        var out = [UInt8]()
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i < bytes.count {
            let b0 = bytes[i]
            let b1: UInt8 = i + 1 < bytes.count ? bytes[i + 1] : 0
            let b2: UInt8 = i + 2 < bytes.count ? bytes[i + 2] : 0
            out.append(alphabet[Int(b0 >> 2)])
            out.append(alphabet[Int((b0 & 0x03) << 4 | b1 >> 4)])
            out.append(i + 1 < bytes.count ? alphabet[Int((b1 & 0x0F) << 2 | b2 >> 6)] : UInt8(ascii: "="))
            out.append(i + 2 < bytes.count ? alphabet[Int(b2 & 0x3F)] : UInt8(ascii: "="))
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes strictly: only the standard alphabet, padding optional but correct when present,
    /// no whitespace, and unused trailing bits must be zero (so each key has exactly one spelling).
    /// Returns nil on anything else.
    static func decode(_ text: Substring) -> [UInt8]? {
        var chars = Array(text.utf8)
        if chars.count % 4 == 0, chars.last == UInt8(ascii: "=") {
            chars.removeLast()
            if chars.last == UInt8(ascii: "=") { chars.removeLast() }
        }
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
        guard accumulator == 0 else { return nil }  // non-zero leftover bits: non-canonical
        return out
    }

    private static func value(of c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): c - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): c - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): 62
        case UInt8(ascii: "/"): 63
        default: nil
        }
    }
}
