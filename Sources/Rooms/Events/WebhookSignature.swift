import Foundation
import HMAC

/// The `X-Cohost-Signature` of a webhook delivery: `sha256=` and the lowercase hex HMAC-SHA256 of
/// the exact body bytes, keyed with the secret of the configured API key (protocol/webhooks.md).
public enum WebhookSignature {
    /// The header the signature travels in.
    public static let header = "X-Cohost-Signature"
    static let prefix = "sha256="

    /// `sha256=<64 lowercase hex digits>` for `body` under `secret`.
    public static func sign(_ body: [UInt8], secret: String) -> String {
        prefix + hex(HMAC.code(.sha256, key: Array(secret.utf8), data: body))
    }

    /// Whether `header` is the signature of `body` under `secret`. The comparison takes the same
    /// time wherever the first difference lies, so a receiver built on this leaks nothing by timing.
    public static func isValid(_ header: String, body: [UInt8], secret: String) -> Bool {
        guard header.hasPrefix(prefix), let given = parseHex(header.dropFirst(prefix.count)), given.count == 32 else {
            return false
        }
        return HMAC.isValid(given, .sha256, key: Array(secret.utf8), data: body)
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Lowercase or uppercase hex to bytes; nil for odd lengths or other characters.
    static func parseHex(_ text: Substring) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 2 == 0, chars.count <= 128 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var out = [UInt8]()
        out.reserveCapacity(chars.count / 2)
        var i = 0
        while i < chars.count {
            guard let hi = nibble(chars[i]), let lo = nibble(chars[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        return out
    }
}
