import Testing
@testable import SRTP

@Suite struct SDESTests {
    static let key = SRTPKnownAnswerTests.masterKeyAndSalt
    static let base64Key = "4fl6DT4Bi+DWT6MsBt5BOQ7Gda1Jiv7rtpYLOqvm"

    @Test func parsesAnInlineKeyWithLifetime() throws {
        #expect(try SDES.parseInlineKey("inline:\(Self.base64Key)|2^31", profile: .aesCm128HmacSha1_32) == Self.key)
        #expect(try SDES.parseInlineKey("inline:\(Self.base64Key)|1048576", profile: .aesCm128HmacSha1_80) == Self.key)
        #expect(try SDES.parseInlineKey("INLINE:\(Self.base64Key)", profile: .aesCm128HmacSha1_80) == Self.key)
    }

    @Test func parsesA28ByteGCMKeyWithOrWithoutPadding() throws {
        let expected = (0..<28).map { UInt8($0) }
        #expect(SDES.inlineKey(expected) == "inline:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGw==")
        #expect(
            try SDES.parseInlineKey("inline:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGw==", profile: .aeadAes128Gcm)
                == expected)
        #expect(
            try SDES.parseInlineKey("inline:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGw", profile: .aeadAes128Gcm)
                == expected)
    }

    @Test func refusesAnMKIAndSaysSo() {
        #expect(throws: SRTPError(status: 2, message: "MKI (\"|1:4\") is not supported; offer the key without an MKI"))
        {
            try SDES.parseInlineKey("inline:\(Self.base64Key)|2^20|1:4", profile: .aesCm128HmacSha1_80)
        }
    }

    @Test func refusesBadBase64() {
        let notBase64 = SRTPError(status: 21, message: "key is not valid base64")
        #expect(throws: notBase64) {
            try SDES.parseInlineKey("inline:4fl6DT4Bi+DWT6MsBt5BOQ7Gda1Jiv7rtpYLOqv!", profile: .aesCm128HmacSha1_80)
        }
        #expect(throws: notBase64) {
            try SDES.parseInlineKey("inline:4fl6DT4Bi+DWT6MsBt5B OQ7Gda1Jiv7rtpYLOqvm", profile: .aesCm128HmacSha1_80)
        }
        #expect(throws: notBase64) {
            try SDES.parseInlineKey("inline:4fl6DT4Bi-DWT6MsBt5BOQ7Gda1Jiv7rtpYLOqvm", profile: .aesCm128HmacSha1_80)
        }
        // Non-zero unused bits in the last character: a second spelling of a 28-byte key.
        #expect(throws: notBase64) {
            try SDES.parseInlineKey("inline:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGx==", profile: .aeadAes128Gcm)
        }
    }

    @Test func refusesAKeyOfTheWrongLength() {
        #expect(
            throws: SRTPError(
                status: 21, message: "AES_CM_128_HMAC_SHA1_80 needs a 30-byte key and salt, the inline key has 28 bytes"
            )
        ) {
            try SDES.parseInlineKey("inline:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGw==", profile: .aesCm128HmacSha1_80)
        }
        #expect(
            throws: SRTPError(
                status: 21, message: "AEAD_AES_128_GCM needs a 28-byte key and salt, the inline key has 30 bytes")
        ) {
            try SDES.parseInlineKey("inline:\(Self.base64Key)", profile: .aeadAes128Gcm)
        }
    }

    @Test func refusesOtherShapes() {
        #expect(
            throws: SRTPError(
                status: 21, message: "key params must start with \"inline:\" (the only key method SRTP defines)")
        ) {
            try SDES.parseInlineKey(Self.base64Key, profile: .aesCm128HmacSha1_80)
        }
        #expect(
            throws: SRTPError(
                status: 21, message: "key params must start with \"inline:\" (the only key method SRTP defines)")
        ) {
            try SDES.parseInlineKey("inline:", profile: .aesCm128HmacSha1_80)
        }
        #expect(throws: SRTPError(status: 2, message: "more than one SDES key in one a=crypto line is not supported")) {
            try SDES.parseInlineKey("inline:\(Self.base64Key);inline:\(Self.base64Key)", profile: .aesCm128HmacSha1_80)
        }
        #expect(throws: SRTPError(status: 21, message: "bad key lifetime \"2^x\": expected a decimal count or 2^N")) {
            try SDES.parseInlineKey("inline:\(Self.base64Key)|2^x", profile: .aesCm128HmacSha1_80)
        }
        #expect(throws: SRTPError(status: 21, message: "key info has more than three |-separated fields")) {
            try SDES.parseInlineKey("inline:\(Self.base64Key)|1|2|3", profile: .aesCm128HmacSha1_80)
        }
        #expect(throws: SRTPError(status: 21, message: "key params longer than 512 characters")) {
            try SDES.parseInlineKey("inline:" + String(repeating: "A", count: 600), profile: .aesCm128HmacSha1_80)
        }
    }

    @Test(arguments: SRTPProfile.allCases)
    func randomKeysHaveTheProfileLengthAndRoundTrip(profile: SRTPProfile) throws {
        let a = SDES.randomKey(profile: profile)
        let b = SDES.randomKey(profile: profile)
        #expect(a.count == profile.keyLength)
        #expect(a != b)
        #expect(try SDES.parseInlineKey(SDES.inlineKey(a), profile: profile) == a)
        // A random key is usable as-is for a session.
        _ = try SRTPSession(profile: profile, masterKeyAndSalt: a, direction: .outbound)
    }
}
