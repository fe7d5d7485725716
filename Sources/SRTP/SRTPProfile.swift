/// The SDES crypto suites Cohost accepts, named as they appear in `a=crypto` (RFC 4568, RFC 7714).
public enum SRTPProfile: String, Sendable, CaseIterable {
    /// AES-128 counter mode with an 80-bit HMAC-SHA1 tag (the suite every SDES endpoint supports).
    case aesCm128HmacSha1_80 = "AES_CM_128_HMAC_SHA1_80"
    /// AES-128 counter mode with a 32-bit HMAC-SHA1 tag on SRTP; SRTCP still uses 80 bits (RFC 4568 §6.2.2).
    case aesCm128HmacSha1_32 = "AES_CM_128_HMAC_SHA1_32"
    /// AES-128 GCM with a 128-bit tag (RFC 7714).
    case aeadAes128Gcm = "AEAD_AES_128_GCM"

    /// Bytes of master key plus master salt carried in an SDES `inline:` key.
    public var keyLength: Int {
        switch self {
        case .aesCm128HmacSha1_80, .aesCm128HmacSha1_32: 30  // 16 key + 14 salt
        case .aeadAes128Gcm: 28  // 16 key + 12 salt
        }
    }
}
