import Foundation
import Testing
@testable import Rooms

/// Room tokens (protocol/token.md). Golden tokens were made with Python's hmac/hashlib/base64, not with this code.
@Suite struct TokenTests {
    static let keys = APIKeys.dev
    /// {"alg":"HS256","typ":"JWT"} . {"iss":"devkey","sub":"alice","room":"standup","exp":2000000000,"iat":1700000000}
    /// signed with "devsecret"; no admin claim.
    static let golden =
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJkZXZrZXkiLCJzdWIiOiJhbGljZSIsInJvb20iOiJzdGFuZHVwIiwiZXhwIjoyMDAwMDAwMDAwLCJpYXQiOjE3MDAwMDAwMDB9.Jhzdb1shOpvAzPG6-whILF-QF0shQz2KfatA_G8nw8g"
    static let goldenClaims = TokenClaims(
        iss: "devkey", sub: "alice", room: "standup", admin: false, exp: 2_000_000_000, nbf: nil, iat: 1_700_000_000)
    /// {"alg":"HS256"} (no typ) . {"iss":"devkey","sub":"ops.bot-1","room":"*","admin":true,"exp":1700003600,"nbf":1699999000}
    static let goldenAdmin =
        "eyJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJkZXZrZXkiLCJzdWIiOiJvcHMuYm90LTEiLCJyb29tIjoiKiIsImFkbWluIjp0cnVlLCJleHAiOjE3MDAwMDM2MDAsIm5iZiI6MTY5OTk5OTAwMH0.Tx5bwETOlceZVmyNMnfjd5kM0o5QX4kE9HqBajdntWI"
    /// {"alg":"HS512","typ":"JWT"} with a signature that is valid HS256 over its bytes (alg confusion).
    static let hs512 =
        "eyJhbGciOiJIUzUxMiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJkZXZrZXkiLCJzdWIiOiJhbGljZSIsInJvb20iOiJzdGFuZHVwIiwiZXhwIjoyMDAwMDAwMDAwfQ.oQbDE0aEohxHqCirznwDRoMG0C3s2KrJwYWFdc5Wflg"
    /// {"alg":"none","typ":"JWT"} with an empty signature.
    static let algNone =
        "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJpc3MiOiJkZXZrZXkiLCJzdWIiOiJhbGljZSIsInJvb20iOiJzdGFuZHVwIiwiZXhwIjoyMDAwMDAwMDAwfQ."
    static let now: Int64 = 1_700_000_100

    /// Signs an arbitrary payload the way `mint` does, to build tokens `mint` would never produce.
    static func signed(_ json: String, secret: String = "devsecret") -> String {
        CompactJWS.sign(payload: Array(json.utf8), secret: secret)
    }

    // MARK: accepted

    @Test func goldenTokenVerifiesWithAdminDefaultingToFalse() throws {
        #expect(try RoomToken.verify(Self.golden, keys: Self.keys, now: Self.now) == Self.goldenClaims)
    }

    @Test func goldenAdminWildcardTokenWithoutTypVerifies() throws {
        let claims = try RoomToken.verify(Self.goldenAdmin, keys: Self.keys, now: 1_700_000_000)
        #expect(
            claims
                == TokenClaims(
                    iss: "devkey", sub: "ops.bot-1", room: "*", admin: true, exp: 1_700_003_600, nbf: 1_699_999_000,
                    iat: nil))
    }

    @Test func aTokenValidForLongerThanTheServersLimitIsRefused() throws {
        // The golden token lives 300,000,000 s from its iat (and 299,999,900 from now).
        #expect(throws: TokenError.lifetimeTooLong(maxSeconds: 86_400)) {
            try RoomToken.verify(Self.golden, keys: Self.keys, now: Self.now, maxLifetime: 86_400)
        }
        // exp 3600 s after iat: fine within a day, refused within half an hour (beyond the 60 s leeway).
        let hour = Self.signed(#"{"iss":"devkey","sub":"a","room":"r","exp":1700003600,"iat":1700000000}"#)
        #expect(throws: Never.self) { try RoomToken.verify(hour, keys: Self.keys, now: Self.now, maxLifetime: 86_400) }
        #expect(throws: TokenError.lifetimeTooLong(maxSeconds: 1_800)) {
            try RoomToken.verify(hour, keys: Self.keys, now: Self.now, maxLifetime: 1_800)
        }
        // Without iat, what is left of it counts; an absurd exp cannot overflow the check.
        let far = Self.signed(#"{"iss":"devkey","sub":"a","room":"r","exp":9223372036854775807}"#)
        #expect(throws: TokenError.lifetimeTooLong(maxSeconds: 86_400)) {
            try RoomToken.verify(far, keys: Self.keys, now: Self.now, maxLifetime: 86_400)
        }
        #expect(TokenError.lifetimeTooLong(maxSeconds: 86_400).code == "token_lifetime_too_long")
    }

    @Test func mintProducesTheSameBytesAsAnIndependentSigner() {
        #expect(
            RoomToken.mint(Self.goldenClaims, secret: "devsecret")
                == "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJhZG1pbiI6ZmFsc2UsImV4cCI6MjAwMDAwMDAwMCwiaWF0IjoxNzAwMDAwMDAwLCJpc3MiOiJkZXZrZXkiLCJyb29tIjoic3RhbmR1cCIsInN1YiI6ImFsaWNlIn0.fHIINCIZ-UF-mtb9XXEsIJf3jzKY9kJMTC-1Lgi6nWo"
        )
        let bob = TokenClaims(iss: "devkey", sub: "bob", room: "standup", exp: 1_700_003_600, nbf: 1_700_000_000)
        #expect(
            RoomToken.mint(bob, secret: "s3cr:et")
                == "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJhZG1pbiI6ZmFsc2UsImV4cCI6MTcwMDAwMzYwMCwiaXNzIjoiZGV2a2V5IiwibmJmIjoxNzAwMDAwMDAwLCJyb29tIjoic3RhbmR1cCIsInN1YiI6ImJvYiJ9.70uIp1760eWo508O85M3XwjsD9e8doGUQv6bCd0Do84"
        )
    }

    @Test func mintedTokenVerifies() throws {
        let claims = TokenClaims(
            iss: "prod-1", sub: "carol_2", room: "weekly.sync", admin: true, exp: 1_700_000_900, nbf: 1_700_000_000,
            iat: 1_700_000_000)
        let keys = try APIKeys.parse("prod-1:0123456789abcdef, other:zzz")
        let token = RoomToken.mint(claims, secret: "0123456789abcdef")
        #expect(try RoomToken.verify(token, keys: keys, now: 1_700_000_500) == claims)
    }

    @Test func aViewerTokenCarriesItsClaimAndNeverTogetherWithAdmin() throws {
        let viewer = Self.signed(#"{"iss":"devkey","sub":"w","room":"show","viewer":true,"exp":1700003600}"#)
        let claims = try RoomToken.verify(viewer, keys: Self.keys, now: Self.now)
        #expect(claims.viewer && !claims.admin)
        // Minted with the claim only when set: other tokens keep their bytes (mintProducesTheSameBytes…).
        let minted = RoomToken.mint(claims, secret: "devsecret")
        #expect(try RoomToken.verify(minted, keys: Self.keys, now: Self.now) == claims)
        let both = Self.signed(
            #"{"iss":"devkey","sub":"w","room":"show","admin":true,"viewer":true,"exp":1700003600}"#)
        #expect(throws: TokenError.malformed("a token is admin or viewer, not both")) {
            try RoomToken.verify(both, keys: Self.keys, now: Self.now)
        }
        let wrongType = Self.signed(#"{"iss":"devkey","sub":"w","room":"show","viewer":"yes","exp":1700003600}"#)
        #expect(throws: TokenError.malformed(#"payload: "viewer" has the wrong type"#)) {
            try RoomToken.verify(wrongType, keys: Self.keys, now: Self.now)
        }
    }

    // MARK: signature and issuer

    @Test func aDisplayNameClaimIsCarriedAndItsRulesAreTheLabelsRules() throws {
        let named = Self.signed(#"{"iss":"devkey","sub":"ann","room":"standup","exp":2000000000,"name":"安娜 Ann"}"#)
        #expect(try RoomToken.verify(named, keys: Self.keys, now: Self.now).name == "安娜 Ann")
        let minted = RoomToken.mint(
            TokenClaims(iss: "devkey", sub: "ann", room: "standup", exp: 2_000_000_000, name: "Ann"),
            secret: "devsecret")
        #expect(try RoomToken.verify(minted, keys: Self.keys, now: Self.now).name == "Ann")
        for bad in ["", #"a\u0007b"#, String(repeating: "x", count: 65)] {
            let token = Self.signed(
                #"{"iss":"devkey","sub":"ann","room":"standup","exp":2000000000,"name":""# + bad + #""}"#)
            #expect(throws: TokenError.self, "\(bad)") { try RoomToken.verify(token, keys: Self.keys, now: Self.now) }
        }
    }

    @Test func tokenSignedWithAnotherSecretHasABadSignature() {
        #expect(throws: TokenError.badSignature) {
            try RoomToken.verify(Self.golden, keys: APIKeys(["devkey": "not-the-secret"]), now: Self.now)
        }
    }

    @Test func alteredSignatureOrPayloadIsABadSignature() {
        var parts = Self.golden.split(separator: ".").map(String.init)
        parts[2] = "K" + parts[2].dropFirst()  // first signature byte changed
        #expect(throws: TokenError.badSignature) {
            try RoomToken.verify(parts.joined(separator: "."), keys: Self.keys, now: Self.now)
        }
        // Payload re-encoded with room "admins" but the original signature kept.
        let forged =
            Self.golden.split(separator: ".")[0] + "."
            + Base64URL.encode(
                Array(
                    #"{"iss":"devkey","sub":"alice","room":"admins","exp":2000000000,"iat":1700000000}"#.utf8)) + "."
            + Self.golden.split(separator: ".")[2]
        #expect(throws: TokenError.badSignature) {
            try RoomToken.verify(String(forged), keys: Self.keys, now: Self.now)
        }
        // A truncated (16-byte) signature.
        parts = Self.golden.split(separator: ".").map(String.init)
        parts[2] = Base64URL.encode([UInt8](repeating: 0, count: 16))
        #expect(throws: TokenError.badSignature) {
            try RoomToken.verify(parts.joined(separator: "."), keys: Self.keys, now: Self.now)
        }
    }

    @Test func unknownIssuerIsRefused() {
        #expect(throws: TokenError.unknownKey) {
            try RoomToken.verify(Self.golden, keys: APIKeys(["prodkey": "devsecret"]), now: Self.now)
        }
    }

    // MARK: time

    @Test func expiryHonoursTheLeeway() throws {
        let exp: Int64 = 2_000_000_000
        #expect(try RoomToken.verify(Self.golden, keys: Self.keys, now: exp + 59) == Self.goldenClaims)
        #expect(throws: TokenError.expired) { try RoomToken.verify(Self.golden, keys: Self.keys, now: exp + 60) }
        #expect(try RoomToken.verify(Self.golden, keys: Self.keys, now: exp - 1, leeway: 0) == Self.goldenClaims)
        #expect(throws: TokenError.expired) { try RoomToken.verify(Self.golden, keys: Self.keys, now: exp, leeway: 0) }
    }

    @Test func notBeforeInTheFutureIsRefused() throws {
        let nbf: Int64 = 1_699_999_000
        #expect(throws: TokenError.notYetValid) {
            try RoomToken.verify(Self.goldenAdmin, keys: Self.keys, now: nbf - 61)
        }
        #expect(try RoomToken.verify(Self.goldenAdmin, keys: Self.keys, now: nbf - 60).nbf == nbf)
        #expect(throws: TokenError.notYetValid) {
            try RoomToken.verify(Self.goldenAdmin, keys: Self.keys, now: nbf - 1, leeway: 0)
        }
    }

    @Test func extremeTimesDoNotTrap() throws {
        let token = Self.signed(
            #"{"iss":"devkey","sub":"a","room":"r","exp":9223372036854775807,"nbf":-9223372036854775808}"#)
        let claims = try RoomToken.verify(token, keys: Self.keys, now: Self.now, leeway: .max)
        #expect(claims.exp == .max && claims.nbf == .min)
    }

    // MARK: header

    @Test func algNoneIsRefused() {
        #expect(throws: TokenError.malformed("unsupported alg \"none\": only HS256 is accepted")) {
            try RoomToken.verify(Self.algNone, keys: Self.keys, now: Self.now)
        }
    }

    @Test func algHS512IsRefusedEvenWithAMatchingHS256Signature() {
        #expect(throws: TokenError.malformed("unsupported alg \"HS512\": only HS256 is accepted")) {
            try RoomToken.verify(Self.hs512, keys: Self.keys, now: Self.now)
        }
    }

    @Test func headerThatIsNotAJSONObjectIsMalformed() {
        let parts = Self.golden.split(separator: ".")
        let token = Base64URL.encode(Array("[1,2]".utf8)) + "." + parts[1] + "." + parts[2]
        #expect(throws: TokenError.malformed("header is not a JSON object with the expected field types")) {
            try RoomToken.verify(token, keys: Self.keys, now: Self.now)
        }
    }

    // MARK: shape

    @Test func emptyTokenIsMissing() {
        #expect(throws: TokenError.missing) { try RoomToken.verify("", keys: Self.keys, now: Self.now) }
    }

    @Test func twoSegmentsAreMalformed() {
        let twoSegments = Self.golden.split(separator: ".").prefix(2).joined(separator: ".")
        #expect(throws: TokenError.malformed("a token has 3 dot-separated segments, this one has 2")) {
            try RoomToken.verify(twoSegments, keys: Self.keys, now: Self.now)
        }
        #expect(throws: TokenError.malformed("a token has 3 dot-separated segments, this one has 4")) {
            try RoomToken.verify(Self.golden + ".x", keys: Self.keys, now: Self.now)
        }
    }

    @Test func badBase64IsMalformed() {
        let p = Self.golden.split(separator: ".")
        #expect(throws: TokenError.malformed("payload is not unpadded base64url")) {
            try RoomToken.verify("\(p[0]).eyJ@.\(p[2])", keys: Self.keys, now: Self.now)
        }
        #expect(throws: TokenError.malformed("header is not unpadded base64url")) {  // standard-alphabet '+' and '/'
            try RoomToken.verify("eyJ+/w.\(p[1]).\(p[2])", keys: Self.keys, now: Self.now)
        }
        #expect(throws: TokenError.malformed("signature is not unpadded base64url")) {  // padding
            try RoomToken.verify("\(p[0]).\(p[1]).\(p[2])=", keys: Self.keys, now: Self.now)
        }
        #expect(throws: TokenError.malformed("payload is not unpadded base64url")) {  // impossible length (4n+1)
            try RoomToken.verify("\(p[0]).\(p[1])A.\(p[2])", keys: Self.keys, now: Self.now)
        }
    }

    @Test func overLongTokenIsMalformed() {
        let long = Self.golden + String(repeating: "A", count: 4097 - Self.golden.utf8.count)
        #expect(throws: TokenError.malformed("token longer than 4096 bytes")) {
            try RoomToken.verify(long, keys: Self.keys, now: Self.now)
        }
    }

    // MARK: claims

    @Test func missingExpIsMalformed() {
        let token = Self.signed(#"{"iss":"devkey","sub":"alice","room":"standup"}"#)
        #expect(throws: TokenError.malformed("exp claim is required")) {
            try RoomToken.verify(token, keys: Self.keys, now: Self.now)
        }
    }

    @Test func wronglyTypedClaimIsMalformed() {
        let token = Self.signed(#"{"iss":"devkey","sub":"alice","room":"standup","exp":"tomorrow"}"#)
        #expect(throws: TokenError.malformed("payload: \"exp\" has the wrong type")) {
            try RoomToken.verify(token, keys: Self.keys, now: Self.now)
        }
        // Foundation reports a fractional or out-of-range integer without naming the field.
        let fractional = Self.signed(#"{"iss":"devkey","sub":"alice","room":"standup","exp":2000000000.5}"#)
        #expect(throws: TokenError.malformed("payload is not a JSON object with the expected field types")) {
            try RoomToken.verify(fractional, keys: Self.keys, now: Self.now)
        }
        let nullSub = Self.signed(#"{"iss":"devkey","sub":null,"room":"standup","exp":2000000000}"#)
        #expect(throws: TokenError.malformed("sub claim is required")) {
            try RoomToken.verify(nullSub, keys: Self.keys, now: Self.now)
        }
    }

    @Test func missingIssuerIsMalformed() {
        let token = Self.signed(#"{"sub":"alice","room":"standup","exp":2000000000}"#)
        #expect(throws: TokenError.malformed("iss claim is required")) {
            try RoomToken.verify(token, keys: Self.keys, now: Self.now)
        }
    }

    @Test func invalidRoomOrUserIsMalformed() {
        let badRoom = Self.signed(#"{"iss":"devkey","sub":"alice","room":"../etc","exp":2000000000}"#)
        #expect(throws: TokenError.malformed("room must match [A-Za-z0-9_.-]{1,64} or be \"*\"")) {
            try RoomToken.verify(badRoom, keys: Self.keys, now: Self.now)
        }
        let emptyUser = Self.signed(#"{"iss":"devkey","sub":"","room":"standup","exp":2000000000}"#)
        #expect(throws: TokenError.malformed("sub must match [A-Za-z0-9_.-]{1,64}")) {
            try RoomToken.verify(emptyUser, keys: Self.keys, now: Self.now)
        }
        let longUser = Self.signed(
            #"{"iss":"devkey","sub":"\#(String(repeating: "u", count: 65))","room":"standup","exp":2000000000}"#)
        #expect(throws: TokenError.malformed("sub must match [A-Za-z0-9_.-]{1,64}")) {
            try RoomToken.verify(longUser, keys: Self.keys, now: Self.now)
        }
        let wildcardUser = Self.signed(#"{"iss":"devkey","sub":"*","room":"*","admin":true,"exp":2000000000}"#)
        #expect(throws: TokenError.malformed("sub must match [A-Za-z0-9_.-]{1,64}")) {
            try RoomToken.verify(wildcardUser, keys: Self.keys, now: Self.now)
        }
    }

    @Test func wildcardRoomWithoutAdminIsRefused() {
        let token = RoomToken.mint(
            TokenClaims(iss: "devkey", sub: "alice", room: "*", admin: false, exp: 2_000_000_000), secret: "devsecret")
        #expect(throws: TokenError.malformed("room \"*\" is only valid in admin tokens")) {
            try RoomToken.verify(token, keys: Self.keys, now: Self.now)
        }
    }

    // MARK: errors, keys, identifiers

    @Test func errorCodesAndMessagesAreTheWireContract() {
        let all: [TokenError] = [.missing, .malformed("x"), .badSignature, .unknownKey, .expired, .notYetValid]
        #expect(
            all.map(\.code) == [
                "token_missing", "token_malformed", "token_bad_signature", "token_unknown_key",
                "token_expired", "token_not_yet_valid",
            ])
        #expect(TokenError.malformed("exp claim is required").message == "malformed token: exp claim is required")
        #expect(TokenError.expired.message == "token has expired")
    }

    @Test func claimsDecodeWithAdminDefaultingToFalse() throws {
        let json = #"{"iss":"k","sub":"u","room":"r","exp":5}"#
        #expect(
            try JSONDecoder().decode(TokenClaims.self, from: Data(json.utf8))
                == TokenClaims(iss: "k", sub: "u", room: "r", exp: 5))
    }

    @Test func apiKeysParse() throws {
        let keys = try APIKeys.parse(" k1:s1 , k2:s:with:colons")
        #expect(keys.secret(for: "k1") == "s1")
        #expect(keys.secret(for: "k2") == "s:with:colons")
        #expect(keys.secret(for: "k3") == nil)
        #expect(keys.keys == ["k1", "k2"])
        #expect(keys.description == "APIKeys(k1, k2)")
        #expect(APIKeys.dev.secret(for: "devkey") == "devsecret")
    }

    @Test func apiKeysParseErrorsSayWhatIsWrongWithoutTheSecret() {
        #expect(throws: APIKeysError(message: "entry 1 of the API key list is empty (expected KEY:SECRET)")) {
            try APIKeys.parse("")
        }
        #expect(throws: APIKeysError(message: "entry 2 of the API key list has no ':' (expected KEY:SECRET)")) {
            try APIKeys.parse("a:b,justakey")
        }
        #expect(throws: APIKeysError(message: "entry 1 of the API key list has an empty key")) {
            try APIKeys.parse(":hunter2")
        }
        #expect(throws: APIKeysError(message: "API key \"k\" has an empty secret")) { try APIKeys.parse("k:") }
        #expect(throws: APIKeysError(message: "API key \"k\" is listed twice")) { try APIKeys.parse("k:a,k:b") }
        #expect(throws: APIKeysError(message: "entry 2 of the API key list is empty (expected KEY:SECRET)")) {
            try APIKeys.parse("k:a,")
        }
        #expect(throws: APIKeysError(message: "API key \"a b\" must match [A-Za-z0-9_.-]{1,64}")) {
            try APIKeys.parse("a b:c")
        }
    }

    @Test func identifierSyntax() {
        #expect(Identifier.isValid("Room_1.main-2"))
        #expect(Identifier.isValid(String(repeating: "x", count: 64)))
        #expect(!Identifier.isValid(String(repeating: "x", count: 65)))
        #expect(!Identifier.isValid(""))
        #expect(!Identifier.isValid("*"))
        #expect(!Identifier.isValid("a/b"))
        #expect(!Identifier.isValid("café"))
        #expect(!Identifier.isValid("a b"))
    }
}
