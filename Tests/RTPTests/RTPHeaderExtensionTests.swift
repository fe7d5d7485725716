import Testing

@testable import RTP

@Suite struct RTPHeaderExtensionTests {
    /// A Chrome-style packet: one-byte extensions abs-send-time (id 2, 3 bytes) and MID (id 4, "1"), then padding.
    static let oneByte: [UInt8] =
        [0x90, 0x60, 0x12, 0x34, 0, 0, 0x0B, 0xB8, 0xDE, 0xAD, 0xBE, 0xEF]
        + [0xBE, 0xDE, 0x00, 0x02, 0x22, 0x01, 0x02, 0x03, 0x40, 0x31, 0x00, 0x00] + [0x9C, 0x01]

    @Test func theMIDIsReadFromAOneByteExtension() {
        #expect(RTPHeaderExtension.element(4, in: Self.oneByte).map(Array.init) == [0x31])
        #expect(RTPHeaderExtension.element(2, in: Self.oneByte).map(Array.init) == [1, 2, 3])
        #expect(RTPHeaderExtension.element(5, in: Self.oneByte) == nil)
    }

    @Test func theMIDIsReadFromATwoByteExtension() {
        let packet: [UInt8] =
            [0x90, 0x60, 0, 1, 0, 0, 0, 1, 0, 0, 0, 7] + [
                0x10, 0x00, 0x00, 0x02, 0x09, 0x03, 0x61, 0x75, 0x64, 0x00, 0, 0,
            ]
        #expect(RTPHeaderExtension.element(9, in: packet).map(Array.init) == Array("aud".utf8))
    }

    @Test func packetsWithoutOrWithBrokenExtensionsHaveNoMID() {
        var noExtension = Self.oneByte
        noExtension[0] = 0x80
        #expect(RTPHeaderExtension.element(4, in: noExtension) == nil)
        // Declares 200 words of extension in a 26-byte packet.
        var long = Self.oneByte
        long[15] = 200
        #expect(RTPHeaderExtension.element(4, in: long) == nil)
        // An element running past the extension's end.
        var overrun = Self.oneByte
        overrun[20] = 0x4F
        #expect(RTPHeaderExtension.element(4, in: overrun) == nil)
        #expect(RTPHeaderExtension.element(4, in: Array(Self.oneByte.prefix(13))) == nil)
    }
}
