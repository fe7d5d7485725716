import HMAC

/// MESSAGE-INTEGRITY (RFC 8489 §14.5): HMAC-SHA1 under the short-term password, the one part of STUN that needs
/// libcrypto (kept apart so the parser builds and fuzzes without it).
extension STUNMessage {
    /// Whether MESSAGE-INTEGRITY in `bytes` (the datagram this message was parsed from) is the HMAC-SHA1 of what
    /// precedes it under `key`, with the length field counting up to and including it (RFC 8489 §14.5). False when
    /// absent. Compared in constant time.
    public func hasValidIntegrity(in bytes: [UInt8], key: [UInt8]) -> Bool {
        guard let integrity, integrity.offset <= bytes.count else { return false }
        var covered = Array(bytes[0..<integrity.offset])
        let length = integrity.offset + 24 - Self.headerSize
        covered[2] = UInt8(length >> 8)
        covered[3] = UInt8(length & 0xFF)
        return HMAC.isValid(integrity.mac, .sha1, key: key, data: covered)
    }

    /// `serialized` with MESSAGE-INTEGRITY under `integrityKey`.
    public func serialized(integrityKey: [UInt8], fingerprint: Bool = false) -> [UInt8] {
        serialized(
            mac: { HMAC.code(.sha1, key: integrityKey, data: $0) },
            fingerprint: fingerprint)
    }
}
