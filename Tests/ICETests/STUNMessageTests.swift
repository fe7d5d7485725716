import Testing
@testable import ICE

/// RFC 5769's test vectors (§2.1–2.3), and what ICE-lite needs of them.
@Suite struct STUNMessageTests {
    static let password = Array("VOkJxbRl1RmTxUk/WvJxBt".utf8)
    static let transaction: [UInt8] = [0xb7, 0xe7, 0xa7, 0x01, 0xbc, 0x34, 0xd6, 0x86, 0xfa, 0x87, 0xdf, 0xae]

    /// §2.1: the username's padding is spaces (0x20), which a receiver must ignore.
    static let sampleRequest: [UInt8] = [
        0x00, 0x01, 0x00, 0x58, 0x21, 0x12, 0xa4, 0x42, 0xb7, 0xe7, 0xa7, 0x01, 0xbc, 0x34, 0xd6, 0x86,
        0xfa, 0x87, 0xdf, 0xae, 0x80, 0x22, 0x00, 0x10, 0x53, 0x54, 0x55, 0x4e, 0x20, 0x74, 0x65, 0x73,
        0x74, 0x20, 0x63, 0x6c, 0x69, 0x65, 0x6e, 0x74, 0x00, 0x24, 0x00, 0x04, 0x6e, 0x00, 0x01, 0xff,
        0x80, 0x29, 0x00, 0x08, 0x93, 0x2f, 0xf9, 0xb1, 0x51, 0x26, 0x3b, 0x36, 0x00, 0x06, 0x00, 0x09,
        0x65, 0x76, 0x74, 0x6a, 0x3a, 0x68, 0x36, 0x76, 0x59, 0x20, 0x20, 0x20, 0x00, 0x08, 0x00, 0x14,
        0x9a, 0xea, 0xa7, 0x0c, 0xbf, 0xd8, 0xcb, 0x56, 0x78, 0x1e, 0xf2, 0xb5, 0xb2, 0xd3, 0xf2, 0x49,
        0xc1, 0xb5, 0x71, 0xa2, 0x80, 0x28, 0x00, 0x04, 0xe5, 0x7a, 0x3b, 0xcf,
    ]

    /// §2.2: a success response mapping 192.0.2.1:32853.
    static let sampleIPv4Response: [UInt8] = [
        0x01, 0x01, 0x00, 0x3c, 0x21, 0x12, 0xa4, 0x42, 0xb7, 0xe7, 0xa7, 0x01, 0xbc, 0x34, 0xd6, 0x86,
        0xfa, 0x87, 0xdf, 0xae, 0x80, 0x22, 0x00, 0x0b, 0x74, 0x65, 0x73, 0x74, 0x20, 0x76, 0x65, 0x63,
        0x74, 0x6f, 0x72, 0x20, 0x00, 0x20, 0x00, 0x08, 0x00, 0x01, 0xa1, 0x47, 0xe1, 0x12, 0xa6, 0x43,
        0x00, 0x08, 0x00, 0x14, 0x2b, 0x91, 0xf5, 0x99, 0xfd, 0x9e, 0x90, 0xc3, 0x8c, 0x74, 0x89, 0xf9,
        0x2a, 0xf9, 0xba, 0x53, 0xf0, 0x6b, 0xe7, 0xd7, 0x80, 0x28, 0x00, 0x04, 0xc0, 0x7d, 0x4c, 0x96,
    ]

    /// §2.3: a success response mapping [2001:db8:1234:5678:11:2233:4455:6677]:32853.
    static let sampleIPv6Response: [UInt8] = [
        0x01, 0x01, 0x00, 0x48, 0x21, 0x12, 0xa4, 0x42, 0xb7, 0xe7, 0xa7, 0x01, 0xbc, 0x34, 0xd6, 0x86,
        0xfa, 0x87, 0xdf, 0xae, 0x80, 0x22, 0x00, 0x0b, 0x74, 0x65, 0x73, 0x74, 0x20, 0x76, 0x65, 0x63,
        0x74, 0x6f, 0x72, 0x20, 0x00, 0x20, 0x00, 0x14, 0x00, 0x02, 0xa1, 0x47, 0x01, 0x13, 0xa9, 0xfa,
        0xa5, 0xd3, 0xf1, 0x79, 0xbc, 0x25, 0xf4, 0xb5, 0xbe, 0xd2, 0xb9, 0xd9, 0x00, 0x08, 0x00, 0x14,
        0xa3, 0x82, 0x95, 0x4e, 0x4b, 0xe6, 0x7b, 0xf1, 0x17, 0x84, 0xc9, 0x7c, 0x82, 0x92, 0xc2, 0x75,
        0xbf, 0xe3, 0xed, 0x41, 0x80, 0x28, 0x00, 0x04, 0xc8, 0xfb, 0x0b, 0x4c,
    ]

    @Test func theSampleRequestParsesWithItsIntegrityAndFingerprint() throws {
        let bytes = Self.sampleRequest
        #expect(STUNMessage.looksLikeSTUN(bytes))
        let m = try STUNMessage(bytes: bytes)
        #expect(m.method == STUNMessage.bindingMethod && m.messageClass == .request)
        #expect(m.transactionID == Self.transaction)
        #expect(m.username == "evtj:h6vY")
        #expect(m.attribute(STUNMessage.AttributeType.priority) == [0x6e, 0x00, 0x01, 0xff])
        #expect(m.attribute(STUNMessage.AttributeType.iceControlled) != nil)
        #expect(m.hasValidIntegrity(in: bytes, key: Self.password))
        #expect(m.hasValidFingerprint(in: bytes))
        #expect(!m.hasValidIntegrity(in: bytes, key: Array("wrong".utf8)))
    }

    @Test func aFlippedBitFailsTheIntegrityAndTheFingerprint() throws {
        var bytes = Self.sampleRequest
        bytes[30] ^= 0x01  // inside SOFTWARE
        let m = try STUNMessage(bytes: bytes)
        #expect(!m.hasValidIntegrity(in: bytes, key: Self.password))
        #expect(!m.hasValidFingerprint(in: bytes))
    }

    @Test func theSampleResponsesDecodeTheirMappedAddresses() throws {
        let v4 = try STUNMessage(bytes: Self.sampleIPv4Response)
        #expect(v4.messageClass == .success && v4.hasValidIntegrity(in: Self.sampleIPv4Response, key: Self.password))
        #expect(v4.hasValidFingerprint(in: Self.sampleIPv4Response))
        let x4 = try #require(v4.attribute(STUNMessage.AttributeType.xorMappedAddress))
        let a4 = try #require(XORMappedAddress.decode(x4, transactionID: Self.transaction))
        #expect(a4.ipv4 == 0xC000_0201 && a4.port == 32853)
        let v6 = try STUNMessage(bytes: Self.sampleIPv6Response)
        #expect(v6.hasValidIntegrity(in: Self.sampleIPv6Response, key: Self.password))
        let x6 = try #require(v6.attribute(STUNMessage.AttributeType.xorMappedAddress))
        let a6 = try #require(XORMappedAddress.decode(x6, transactionID: Self.transaction))
        #expect(
            a6.ipv6 == [0x20, 0x01, 0x0d, 0xb8, 0x12, 0x34, 0x56, 0x78, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77])
        #expect(a6.port == 32853)
    }

    @Test func theSampleIPv4ResponseIsWrittenByteForByte() throws {
        let response = STUNMessage(
            method: STUNMessage.bindingMethod, messageClass: .success, transactionID: Self.transaction,
            attributes: [
                .init(type: STUNMessage.AttributeType.software, value: Array("test vector".utf8)),
                .init(
                    type: STUNMessage.AttributeType.xorMappedAddress,
                    value: XORMappedAddress.value(ipv4: 0xC000_0201, port: 32853)),
            ])
        // The RFC pads SOFTWARE with a space; Cohost pads with zero, so only that byte differs.
        var expected = Self.sampleIPv4Response
        expected[35] = 0
        let written = response.serialized(integrityKey: Self.password, fingerprint: true)
        #expect(written.count == expected.count)
        #expect(written[0..<52] == expected[0..<52])
        let parsed = try STUNMessage(bytes: written)
        #expect(parsed.hasValidIntegrity(in: written, key: Self.password) && parsed.hasValidFingerprint(in: written))
        #expect(
            XORMappedAddress.value(
                ipv6: [0x20, 0x01, 0x0d, 0xb8, 0x12, 0x34, 0x56, 0x78, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77],
                port: 32853, transactionID: Self.transaction) == Array(Self.sampleIPv6Response[40..<60]))
    }

    @Test func malformedMessagesAreRefusedWithTheirReason() {
        #expect(throws: STUNError.tooShort(4)) { try STUNMessage(bytes: [0, 1, 0, 0]) }
        var noCookie = Self.sampleRequest
        noCookie[4] = 0
        #expect(throws: STUNError.notSTUN("no magic cookie")) { try STUNMessage(bytes: noCookie) }
        #expect(throws: STUNError.badLength(declared: 0x58, actual: 0x57)) {
            try STUNMessage(bytes: Array(Self.sampleRequest.dropLast()))
        }
        var overrun = Self.sampleRequest
        overrun[23] = 0xFF  // SOFTWARE claims 255 bytes
        #expect(throws: STUNError.truncatedAttribute(type: 0x8022)) { try STUNMessage(bytes: overrun) }
        // An attribute after FINGERPRINT.
        var after = Self.sampleRequest + [0x00, 0x24, 0x00, 0x00]
        after[3] = 0x5C
        #expect(throws: STUNError.misplacedAttribute(type: 0x0024)) { try STUNMessage(bytes: after) }
    }
}
