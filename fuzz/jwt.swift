import Foundation

/// Room tokens before their signature is checked: the compact JWS split and its base64url, then the header's JSON.
/// No crash on any text, and an accepted token is the only spelling of its bytes (re-encoding gives it back), so
/// no two strings carry one signed value.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJWT(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    if let jws = try? CompactJWS.split(text) {
        let rebuilt = [jws.header, jws.payload, jws.signature].map(Base64URL.encode).joined(separator: ".")
        require(rebuilt == text, "base64url is not canonical: \(text) decodes and encodes as \(rebuilt)")
        _ = try? JSONDecoder().decode(JOSEHeader.self, from: Data(jws.header))
    }
    return 0
}
