import Foundation
import HMAC
import Testing

/// libcrypto's HMAC as the module wraps it, against the RFCs' test vectors.
@Suite struct HMACTests {
    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    @Test func theRFCVectorsComeOutExactly() {
        let key = Array("Jefe".utf8)
        let data = Array("what do ya want for nothing?".utf8)
        // RFC 2202 §3 test case 2, RFC 4231 §4.3.
        #expect(Self.hex(HMAC.code(.sha1, key: key, data: data)) == "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79")
        #expect(
            Self.hex(HMAC.code(.sha256, key: key, data: data))
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test func anEmptyKeyAndMessageAreValidInputs() {
        #expect(Self.hex(HMAC.code(.sha1, key: [], data: [])) == "fbdb1d1b18aa6c08324b7d64b71fb76370690e1d")
        #expect(
            Self.hex(HMAC.code(.sha256, key: [], data: []))
                == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
    }

    @Test func validationRefusesATamperedOrShortenedMAC() {
        let key = Array("k".utf8)
        let data = Array("message".utf8)
        let mac = HMAC.code(.sha256, key: key, data: data)
        #expect(HMAC.isValid(mac, .sha256, key: key, data: data))
        var flipped = mac
        flipped[31] ^= 1
        #expect(!HMAC.isValid(flipped, .sha256, key: key, data: data))
        #expect(!HMAC.isValid(Array(mac.prefix(20)), .sha256, key: key, data: data))
        #expect(!HMAC.isValid(mac, .sha256, key: key, data: data + [0]))
        #expect(!HMAC.isValid(HMAC.code(.sha1, key: key, data: data), .sha256, key: key, data: data))
    }
}
