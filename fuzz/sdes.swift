/// SDES `inline:` key parameters of `a=crypto` lines (RFC 4568): no crash on any text, every accepted key has the
/// profile's length, and our own inline form of it parses back to the same key.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSDES(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    for profile in SRTPProfile.allCases {
        guard let key = try? SDES.parseInlineKey(text, profile: profile) else { continue }
        require(key.count == profile.keyLength, "\(profile): a \(key.count)-byte key was accepted")
        let again = try? SDES.parseInlineKey(SDES.inlineKey(key), profile: profile)
        require(again == key, "\(profile): our inline form of an accepted key does not parse back")
    }
    return 0
}
