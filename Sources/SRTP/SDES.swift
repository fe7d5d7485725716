/// SDES key handling for `a=crypto` lines (RFC 4568 §6.1; AEAD suites RFC 7714 §12).
///
/// Only the `inline:` key method with a single key is supported. A lifetime is accepted and
/// checked for form but not enforced (Cohost sessions are far shorter than 2^31 packets); an MKI is
/// refused, because Cohost creates one master key per session and never switches keys by MKI.
public enum SDES {
    /// Longest key-params string looked at; a real one is under 100 characters.
    static let maxKeyParamsLength = 512

    /// Parses the key-params of an `a=crypto` line (`inline:<base64>[|lifetime][|MKI:len]`) into
    /// the master key and salt (`profile.keyLength` bytes).
    public static func parseInlineKey(_ keyParams: String, profile: SRTPProfile) throws(SRTPError) -> [UInt8] {
        guard keyParams.utf8.count <= maxKeyParamsLength else {
            throw .parse("key params longer than \(maxKeyParamsLength) characters")
        }
        guard !keyParams.contains(";") else {
            throw .badParameter("more than one SDES key in one a=crypto line is not supported")
        }
        let prefix = "inline:"
        guard keyParams.utf8.count > prefix.utf8.count,
            keyParams.prefix(prefix.count).lowercased() == prefix
        else {
            throw .parse("key params must start with \"inline:\" (the only key method SRTP defines)")
        }
        let keyInfo = keyParams.dropFirst(prefix.count)
        let parts = keyInfo.split(separator: "|", omittingEmptySubsequences: false)
        guard let keySalt = parts.first, parts.count <= 3 else {
            throw .parse("key info has more than three |-separated fields")
        }
        for field in parts.dropFirst() {
            if field.contains(":") {
                throw .badParameter("MKI (\"|\(field)\") is not supported; offer the key without an MKI")
            }
            guard isLifetime(field) else {
                throw .parse("bad key lifetime \"\(field)\": expected a decimal count or 2^N")
            }
        }
        if parts.count == 3 {
            throw .parse("two lifetime fields in key info")
        }
        guard let key = Base64.decode(keySalt) else {
            throw .parse("key is not valid base64")
        }
        guard key.count == profile.keyLength else {
            throw .parse(
                "\(profile.rawValue) needs a \(profile.keyLength)-byte key and salt, the inline key has \(key.count) bytes"
            )
        }
        return key
    }

    /// The key-params for an answer: `inline:<base64 of key and salt>`.
    public static func inlineKey(_ keyAndSalt: [UInt8]) -> String {
        "inline:" + Base64.encode(keyAndSalt)
    }

    /// A fresh master key and salt for `profile`, from the system's cryptographic random source.
    public static func randomKey(profile: SRTPProfile) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return randomKey(profile: profile, using: &generator)
    }

    /// From `generator`: tests pin answers with a seeded one.
    public static func randomKey<R: RandomNumberGenerator>(profile: SRTPProfile, using generator: inout R) -> [UInt8] {
        (0..<profile.keyLength).map { _ in generator.next() }
    }

    /// RFC 4568 lifetime: `2^N` or a decimal packet count (both small enough to mean something).
    private static func isLifetime(_ field: Substring) -> Bool {
        let digits: Substring
        if field.hasPrefix("2^") {
            digits = field.dropFirst(2)
            guard digits.count <= 2 else { return false }
        } else {
            digits = field
            guard digits.count <= 20 else { return false }
        }
        return !digits.isEmpty && digits.allSatisfy { $0.isASCII && $0.isNumber }
    }
}
