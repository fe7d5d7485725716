/// A JWS in compact form signed with HS256, split and decoded but not yet verified.
struct CompactJWS {
    /// `<header>.<payload>` exactly as received: the bytes the signature covers.
    let signingInput: Substring
    let header: [UInt8]
    let payload: [UInt8]
    let signature: [UInt8]

    /// Splits and base64url-decodes the three segments.
    static func split(_ token: String) throws(TokenError) -> CompactJWS {
        let segments = token.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3 else {
            throw .malformed("a token has 3 dot-separated segments, this one has \(segments.count)")
        }
        guard let header = Base64URL.decode(segments[0]) else { throw .malformed("header is not unpadded base64url") }
        guard let payload = Base64URL.decode(segments[1]) else { throw .malformed("payload is not unpadded base64url") }
        guard let signature = Base64URL.decode(segments[2]) else {
            throw .malformed("signature is not unpadded base64url")
        }
        let inputEnd = segments[1].endIndex
        return CompactJWS(
            signingInput: token[token.startIndex..<inputEnd], header: header, payload: payload,
            signature: signature)
    }
}

/// The JOSE header fields Cohost looks at.
struct JOSEHeader: Decodable {
    var alg: String?
    var typ: String?
    var crit: [String]?
}
