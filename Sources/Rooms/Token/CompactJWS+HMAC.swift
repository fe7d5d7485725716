import Crypto

/// HS256 (HMAC-SHA256) over a compact JWS: the only part of tokens that needs swift-crypto.
extension CompactJWS {
    /// HS256 over the signing input, compared in constant time (swift-crypto's MAC check).
    func hasValidSignature(secret: String) -> Bool {
        let key = SymmetricKey(data: Array(secret.utf8))
        return HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: Array(signingInput.utf8), using: key)
    }

    /// The one header Cohost signs with and accepts.
    static let hs256Header = Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8)

    /// Builds `<header>.<payload>.<signature>` for an already-serialised payload.
    static func sign(payload: [UInt8], secret: String) -> String {
        let input = Base64URL.encode(hs256Header) + "." + Base64URL.encode(payload)
        let key = SymmetricKey(data: Array(secret.utf8))
        let mac = HMAC<SHA256>.authenticationCode(for: Array(input.utf8), using: key)
        return input + "." + Base64URL.encode(mac)
    }
}
