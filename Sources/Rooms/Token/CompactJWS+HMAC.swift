import HMAC

/// HS256 (HMAC-SHA256) over a compact JWS: the only part of tokens that needs libcrypto.
extension CompactJWS {
    /// HS256 over the signing input, compared in constant time.
    func hasValidSignature(secret: String) -> Bool {
        HMAC.isValid(signature, .sha256, key: Array(secret.utf8), data: Array(signingInput.utf8))
    }

    /// The one header Cohost signs with and accepts.
    static let hs256Header = Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8)

    /// Builds `<header>.<payload>.<signature>` for an already-serialised payload.
    static func sign(payload: [UInt8], secret: String) -> String {
        let input = Base64URL.encode(hs256Header) + "." + Base64URL.encode(payload)
        let mac = HMAC.code(.sha256, key: Array(secret.utf8), data: Array(input.utf8))
        return input + "." + Base64URL.encode(mac)
    }
}
