import Testing
@testable import SRTP

/// libsrtp2's own reference packets (test/srtp_driver.c, `srtp_validate`): AES_CM_128_HMAC_SHA1_80
/// with the driver's test key, checked byte for byte through the public session API.
///
/// RFC 3711 Appendix B.2 checks the raw AES-CM keystream for given session keys; the installed
/// libsrtp2 headers expose no cipher type to run it against (SRTP sessions always derive their own
/// session keys), so these end-to-end packets are the known answer instead.
@Suite struct SRTPKnownAnswerTests {
    static let masterKeyAndSalt: [UInt8] = [
        0xe1, 0xf9, 0x7a, 0x0d, 0x3e, 0x01, 0x8b, 0xe0, 0xd6, 0x4f, 0xa3, 0x2c, 0x06, 0xde, 0x41, 0x39,
        0x0e, 0xc6, 0x75, 0xad, 0x49, 0x8a, 0xfe, 0xeb, 0xb6, 0x96, 0x0b, 0x3a, 0xab, 0xe6,
    ]
    static let rtpPlaintext: [UInt8] =
        [0x80, 0x0f, 0x12, 0x34, 0xde, 0xca, 0xfb, 0xad, 0xca, 0xfe, 0xba, 0xbe]
        + [UInt8](repeating: 0xab, count: 16)
    static let srtpCiphertext: [UInt8] = [
        0x80, 0x0f, 0x12, 0x34, 0xde, 0xca, 0xfb, 0xad, 0xca, 0xfe, 0xba, 0xbe, 0x4e, 0x55, 0xdc, 0x4c,
        0xe7, 0x99, 0x78, 0xd8, 0x8c, 0xa4, 0xd2, 0x15, 0x94, 0x9d, 0x24, 0x02, 0xb7, 0x8d, 0x6a, 0xcc,
        0x99, 0xea, 0x17, 0x9b, 0x8d, 0xbb,
    ]
    static let rtcpPlaintext: [UInt8] =
        [0x81, 0xc8, 0x00, 0x0b, 0xca, 0xfe, 0xba, 0xbe]
        + [UInt8](repeating: 0xab, count: 16)
    static let srtcpCiphertext: [UInt8] = [
        0x81, 0xc8, 0x00, 0x0b, 0xca, 0xfe, 0xba, 0xbe, 0x71, 0x28, 0x03, 0x5b, 0xe4, 0x87, 0xb9, 0xbd,
        0xbe, 0xf8, 0x90, 0x41, 0xf9, 0x77, 0xa5, 0xa8, 0x80, 0x00, 0x00, 0x01, 0x99, 0x3e, 0x08, 0xcd,
        0x54, 0xd6, 0xc1, 0x23, 0x07, 0x98,
    ]

    @Test func protectRTPProducesLibsrtpReferenceCiphertext() throws {
        let sender = try SRTPSession(
            profile: .aesCm128HmacSha1_80, masterKeyAndSalt: Self.masterKeyAndSalt, direction: .outbound)
        #expect(try sender.protectRTP(Self.rtpPlaintext) == Self.srtpCiphertext)
    }

    @Test func unprotectRTPRecoversLibsrtpReferencePlaintext() throws {
        let receiver = try SRTPSession(
            profile: .aesCm128HmacSha1_80, masterKeyAndSalt: Self.masterKeyAndSalt, direction: .inbound)
        #expect(try receiver.unprotectRTP(Self.srtpCiphertext) == Self.rtpPlaintext)
    }

    @Test func protectRTCPProducesLibsrtpReferenceCiphertext() throws {
        let sender = try SRTPSession(
            profile: .aesCm128HmacSha1_80, masterKeyAndSalt: Self.masterKeyAndSalt, direction: .outbound)
        #expect(try sender.protectRTCP(Self.rtcpPlaintext) == Self.srtcpCiphertext)
    }

    @Test func protectRTCPIntoAReusedBufferProducesTheSameCiphertext() throws {
        let sender = try SRTPSession(
            profile: .aesCm128HmacSha1_80, masterKeyAndSalt: Self.masterKeyAndSalt, direction: .outbound)
        var out: [UInt8] = [0xEE, 0xEE]  // emptied first
        try sender.protectRTCP(Self.rtcpPlaintext, into: &out)
        #expect(out == Self.srtcpCiphertext)
    }

    @Test func unprotectRTCPRecoversLibsrtpReferencePlaintext() throws {
        let receiver = try SRTPSession(
            profile: .aesCm128HmacSha1_80, masterKeyAndSalt: Self.masterKeyAndSalt, direction: .inbound)
        #expect(try receiver.unprotectRTCP(Self.srtcpCiphertext) == Self.rtcpPlaintext)
    }

    @Test func referenceKeyRoundTripsThroughSDESInlineForm() throws {
        let inline = "inline:4fl6DT4Bi+DWT6MsBt5BOQ7Gda1Jiv7rtpYLOqvm"
        #expect(SDES.inlineKey(Self.masterKeyAndSalt) == inline)
        #expect(try SDES.parseInlineKey(inline, profile: .aesCm128HmacSha1_80) == Self.masterKeyAndSalt)
    }
}
