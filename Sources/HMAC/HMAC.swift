import CLibCrypto

/// HMAC (RFC 2104) over OpenSSL's libcrypto: SHA-1 for STUN's MESSAGE-INTEGRITY, SHA-256 for tokens and webhook
/// signatures. Pure functions of their arguments; no C pointer outlives a call.
public enum HMAC {
    public enum Hash: Sendable {
        case sha1
        case sha256

        /// The MAC's length in bytes.
        public var size: Int {
            switch self {
            case .sha1: 20
            case .sha256: 32
            }
        }
    }

    /// The MAC of `data` under `key`.
    public static func code(_ hash: Hash, key: [UInt8], data: [UInt8]) -> [UInt8] {
        var mac = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let digest = hash == .sha1 ? EVP_sha1() : EVP_sha256()
        // An empty array may have no storage: libcrypto gets a valid pointer with length 0 either way.
        let keyBytes = key.isEmpty ? [0] : key
        let dataBytes = data.isEmpty ? [0] : data
        let done = keyBytes.withUnsafeBytes { k in
            dataBytes.withUnsafeBytes { d in
                mac.withUnsafeMutableBufferPointer { out in
                    CLibCrypto.HMAC(
                        digest, k.baseAddress, Int32(key.count), d.bindMemory(to: UInt8.self).baseAddress,
                        data.count, out.baseAddress, &length)
                }
            }
        }
        precondition(done != nil && Int(length) == hash.size, "libcrypto's HMAC failed")
        return Array(mac.prefix(Int(length)))
    }

    /// Whether `mac` is the MAC of `data` under `key`, compared in constant time (the time does not depend on
    /// where the first difference lies).
    public static func isValid(_ mac: [UInt8], _ hash: Hash, key: [UInt8], data: [UInt8]) -> Bool {
        guard mac.count == hash.size else { return false }
        let expected = code(hash, key: key, data: data)
        return expected.withUnsafeBytes { a in
            mac.withUnsafeBytes { b in CRYPTO_memcmp(a.baseAddress, b.baseAddress, hash.size) == 0 }
        }
    }
}
