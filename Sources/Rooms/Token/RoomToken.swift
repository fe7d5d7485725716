import Foundation

/// The claims of a room token (protocol/token.md).
public struct TokenClaims: Sendable, Equatable, Codable {
    /// The API key that signed the token.
    public var iss: String
    /// The user id.
    public var sub: String
    /// The room name, or `*` (admin tokens only).
    public var room: String
    /// Whether the holder may administer the room. Absent in the JSON means false.
    public var admin: Bool
    /// A viewer only plays the room's programme (HLS): never joins, administers or reads events. Absent: false;
    /// never together with `admin`.
    public var viewer: Bool
    /// Expiry, seconds since 1970 (required).
    public var exp: Int64
    /// Not-before, seconds since 1970.
    public var nbf: Int64?
    /// Issued-at, seconds since 1970.
    public var iat: Int64?
    /// The invite this token is (`POST …/invites`): it opens the room only while the server holds that invite.
    public var inv: String?
    /// The holder's display name (labels, cards, lists); `DisplayName`'s rules.
    public var name: String?

    public init(
        iss: String, sub: String, room: String, admin: Bool = false, viewer: Bool = false, exp: Int64,
        nbf: Int64? = nil, iat: Int64? = nil, inv: String? = nil, name: String? = nil
    ) {
        self.inv = inv
        self.name = name
        self.iss = iss
        self.sub = sub
        self.room = room
        self.admin = admin
        self.viewer = viewer
        self.exp = exp
        self.nbf = nbf
        self.iat = iat
    }

    private enum CodingKeys: String, CodingKey { case iss, sub, room, admin, viewer, exp, nbf, iat, inv, name }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        iss = try c.decode(String.self, forKey: .iss)
        sub = try c.decode(String.self, forKey: .sub)
        room = try c.decode(String.self, forKey: .room)
        admin = try c.decodeIfPresent(Bool.self, forKey: .admin) ?? false
        viewer = try c.decodeIfPresent(Bool.self, forKey: .viewer) ?? false
        exp = try c.decode(Int64.self, forKey: .exp)
        nbf = try c.decodeIfPresent(Int64.self, forKey: .nbf)
        iat = try c.decodeIfPresent(Int64.self, forKey: .iat)
        inv = try c.decodeIfPresent(String.self, forKey: .inv)
        name = try c.decodeIfPresent(String.self, forKey: .name)
    }

    /// `viewer` only when set: every other token keeps the claims it always had.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(iss, forKey: .iss)
        try c.encode(sub, forKey: .sub)
        try c.encode(room, forKey: .room)
        try c.encode(admin, forKey: .admin)
        if viewer { try c.encode(true, forKey: .viewer) }
        try c.encode(exp, forKey: .exp)
        try c.encodeIfPresent(nbf, forKey: .nbf)
        try c.encodeIfPresent(iat, forKey: .iat)
        try c.encodeIfPresent(inv, forKey: .inv)
        try c.encodeIfPresent(name, forKey: .name)
    }
}

/// A bad `--keys` / `COHOST_KEYS` value. The message never contains a secret.
public struct APIKeysError: Error, Equatable, Sendable, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}

/// API keys and their signing secrets.
public struct APIKeys: Sendable, CustomStringConvertible {
    private let secrets: [String: String]

    public init(_ pairs: [String: String]) { secrets = pairs }

    /// Dev mode's single key (protocol/token.md); the server says so loudly when it uses it.
    public static let dev = APIKeys(["devkey": "devsecret"])

    /// Whether these are dev mode's published key and secret.
    public var isDev: Bool { secrets == ["devkey": "devsecret"] }

    /// Parses `KEY:SECRET[,KEY2:SECRET2]`. Whitespace around entries is ignored; a secret may
    /// itself contain `:` (the key ends at the first one). Keys follow the identifier syntax.
    public static func parse(_ spec: String) throws -> APIKeys {
        var pairs: [String: String] = [:]
        let entries = spec.split(separator: ",", omittingEmptySubsequences: false)
        for (index, rawEntry) in entries.enumerated() {
            let entry = rawEntry.trimmingCharacters(in: .whitespaces)
            let position = "entry \(index + 1)"
            guard !entry.isEmpty else {
                throw APIKeysError(message: "\(position) of the API key list is empty (expected KEY:SECRET)")
            }
            guard let colon = entry.firstIndex(of: ":") else {
                throw APIKeysError(message: "\(position) of the API key list has no ':' (expected KEY:SECRET)")
            }
            let key = String(entry[..<colon])
            let secret = String(entry[entry.index(after: colon)...])
            guard !key.isEmpty else { throw APIKeysError(message: "\(position) of the API key list has an empty key") }
            guard Identifier.isValid(key) else {
                throw APIKeysError(message: "API key \"\(key)\" must match [A-Za-z0-9_.-]{1,64}")
            }
            guard !secret.isEmpty else { throw APIKeysError(message: "API key \"\(key)\" has an empty secret") }
            guard pairs[key] == nil else { throw APIKeysError(message: "API key \"\(key)\" is listed twice") }
            pairs[key] = secret
        }
        return APIKeys(pairs)
    }

    public func secret(for key: String) -> String? { secrets[key] }

    /// The key names, sorted; secrets are never listed.
    public var keys: [String] { secrets.keys.sorted() }

    public var description: String { "APIKeys(\(keys.joined(separator: ", ")))" }
}

/// Room names and user ids: `[A-Za-z0-9_.-]{1,64}`.
public enum Identifier {
    public static let maxLength = 64

    public static func isValid(_ s: String) -> Bool {
        let bytes = s.utf8
        guard (1...maxLength).contains(bytes.count) else { return false }
        return bytes.allSatisfy { b in
            (b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z")) || (b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z"))
                || (b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9"))
                || b == UInt8(ascii: "_") || b == UInt8(ascii: ".") || b == UInt8(ascii: "-")
        }
    }
}

/// Room tokens: JWTs signed HS256 with an API key's secret (protocol/token.md).
public enum RoomToken {
    /// Longest token looked at, in bytes; real ones are ~250.
    public static let maxLength = 4096

    /// Verifies a token and returns its claims.
    ///
    /// Order matters: the header is checked before anything else (so `alg: none` can never reach
    /// a claim), the issuer only selects the secret, and no claim is trusted before the HS256
    /// signature over the received bytes matches (compared in constant time).
    /// - Parameters:
    ///   - now: the current time, seconds since 1970.
    ///   - leeway: seconds of clock skew allowed on `exp` and `nbf`.
    ///   - maxLifetime: the longest a token may be valid, from its `iat` and from now (nil: no limit).
    public static func verify(
        _ token: String, keys: APIKeys, now: Int64, leeway: Int64 = 60, maxLifetime: Int64? = nil
    ) throws(TokenError) -> TokenClaims {
        guard !token.isEmpty else { throw .missing }
        guard token.utf8.count <= maxLength else { throw .malformed("token longer than \(maxLength) bytes") }
        let jws = try CompactJWS.split(token)

        let header: JOSEHeader = try decodeJSON(jws.header, what: "header")
        guard let alg = header.alg else { throw .malformed("header has no alg") }
        guard alg == "HS256" else { throw .malformed("unsupported alg \"\(printable(alg))\": only HS256 is accepted") }
        if let typ = header.typ, typ.uppercased() != "JWT" {
            throw .malformed("unsupported typ \"\(printable(typ))\": expected JWT")
        }
        guard header.crit == nil else { throw .malformed("critical header extensions are not supported") }

        let raw: RawClaims = try decodeJSON(jws.payload, what: "payload")
        guard let iss = raw.iss else { throw .malformed("iss claim is required") }
        guard let secret = keys.secret(for: iss) else { throw .unknownKey }
        guard jws.hasValidSignature(secret: secret) else { throw .badSignature }

        // Signed by a known key from here on: what is left are mistakes by the issuer.
        guard let exp = raw.exp else { throw .malformed("exp claim is required") }
        guard let sub = raw.sub else { throw .malformed("sub claim is required") }
        guard let room = raw.room else { throw .malformed("room claim is required") }
        let admin = raw.admin ?? false
        let viewer = raw.viewer ?? false
        guard !(admin && viewer) else { throw .malformed("a token is admin or viewer, not both") }
        guard Identifier.isValid(sub) else { throw .malformed("sub must match [A-Za-z0-9_.-]{1,64}") }
        if room == "*" {
            guard admin else { throw .malformed("room \"*\" is only valid in admin tokens") }
        } else {
            guard Identifier.isValid(room) else { throw .malformed("room must match [A-Za-z0-9_.-]{1,64} or be \"*\"") }
        }

        let skew = max(0, leeway)
        // Valid while now < exp + skew (RFC 7519 §4.1.4); saturate instead of trapping on huge values.
        let (expiresAt, expOverflow) = exp.addingReportingOverflow(skew)
        if !expOverflow, now >= expiresAt { throw .expired }
        if let nbf = raw.nbf {
            let (validFrom, nbfOverflow) = nbf.subtractingReportingOverflow(skew)
            if !nbfOverflow, now < validFrom { throw .notYetValid }
        }
        if let maxLifetime {
            // Saturating: exp and iat are the issuer's numbers, any Int64.
            let limit = maxLifetime.addingReportingOverflow(skew)
            let remaining = exp.subtractingReportingOverflow(now)
            let whole = raw.iat.map { exp.subtractingReportingOverflow($0) }
            if remaining.overflow || remaining.partialValue > limit.partialValue
                || whole.map({ $0.overflow || $0.partialValue > limit.partialValue }) == true
            {
                throw .lifetimeTooLong(maxSeconds: maxLifetime)
            }
        }
        if let inv = raw.inv, !(1...64).contains(inv.utf8.count) { throw .malformed("inv must be 1 to 64 bytes") }
        if let name = raw.name, !DisplayName.isValid(name) { throw .malformed("name: \(DisplayName.rule)") }
        return TokenClaims(
            iss: iss, sub: sub, room: room, admin: admin, viewer: viewer, exp: exp, nbf: raw.nbf, iat: raw.iat,
            inv: raw.inv, name: raw.name)
    }

    /// Signs `claims` with `secret` (HS256, header `{"alg":"HS256","typ":"JWT"}`, claims with sorted keys).
    public static func mint(_ claims: TokenClaims, secret: String) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding strings, integers and booleans cannot fail; an empty payload would fail verification loudly.
        let payload = (try? encoder.encode(claims)) ?? Data()
        return CompactJWS.sign(payload: Array(payload), secret: secret)
    }

    /// Claims as received, every field optional, so a missing one gets its own message.
    private struct RawClaims: Decodable {
        var iss: String?
        var sub: String?
        var room: String?
        var admin: Bool?
        var viewer: Bool?
        var exp: Int64?
        var nbf: Int64?
        var iat: Int64?
        var inv: String?
        var name: String?
    }

    private static func decodeJSON<T: Decodable>(_ bytes: [UInt8], what: String) throws(TokenError) -> T {
        do {
            return try JSONDecoder().decode(T.self, from: Data(bytes))
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.dataCorrupted(context) {
            // A field of the wrong type (or a number out of Int64 range) names its key; a
            // top-level mismatch (an array, a string, bad JSON) has no key.
            guard let key = context.codingPath.first?.stringValue else {
                throw .malformed("\(what) is not a JSON object with the expected field types")
            }
            throw .malformed("\(what): \"\(printable(key))\" has the wrong type")
        } catch let DecodingError.valueNotFound(_, context) {
            throw .malformed("\(what): \"\(printable(context.codingPath.first?.stringValue ?? "?"))\" is null")
        } catch {
            throw .malformed("\(what) is not a JSON object with the expected field types")
        }
    }

    /// Echoes attacker-chosen text into messages only as short, plain ASCII.
    private static func printable(_ s: String) -> String {
        String(
            String.UnicodeScalarView(
                s.unicodeScalars.prefix(32).map { $0.isASCII && $0.value >= 0x20 && $0 != "\"" ? $0 : "?" }))
    }
}
