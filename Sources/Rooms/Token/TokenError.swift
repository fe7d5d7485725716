/// Why a token was refused; `code` is the wire error code (401 for all of them).
public enum TokenError: Error, Equatable, Sendable, CustomStringConvertible {
    case missing
    case malformed(String)
    case badSignature
    case unknownKey
    case expired
    case notYetValid
    /// Valid for longer than the server accepts (`max_token_ttl`): a stolen one would be good too long, and the
    /// server could not remember a kick for as long as it lives.
    case lifetimeTooLong(maxSeconds: Int64)

    public var code: String {
        switch self {
        case .missing: "token_missing"
        case .malformed: "token_malformed"
        case .badSignature: "token_bad_signature"
        case .unknownKey: "token_unknown_key"
        case .expired: "token_expired"
        case .notYetValid: "token_not_yet_valid"
        case .lifetimeTooLong: "token_lifetime_too_long"
        }
    }

    public var message: String {
        switch self {
        case .missing: "no token given"
        case .malformed(let detail): "malformed token: \(detail)"
        case .badSignature: "token signature does not match the key's secret"
        case .unknownKey: "token issuer is not a known API key"
        case .expired: "token has expired"
        case .notYetValid: "token is not valid yet (nbf is in the future)"
        case .lifetimeTooLong(let max): "token is valid for longer than this server accepts (\(max) s)"
        }
    }

    public var description: String { "\(code): \(message)" }
}
