import Testing
@testable import RTP

@Suite struct RTPPacketTests {
    /// Marker set, PT 96, no CSRC/extension/padding.
    static let simple = hex("80e0698f d9c293da 1c642782 9836be889e")
    /// P, X and CC=2: two CSRCs, a one-word RFC 8285 extension, 3 payload bytes, 3 padding bytes.
    static let full = hex(
        """
        b26fffff 00000960 000003e9
        11223344 55667788
        bede0001 10aa0000
        010203 000003
        """)

    @Test func parsesMarkerPayloadTypeAndFixedFields() throws {
        let p = try RTPPacket(bytes: Self.simple)
        #expect(p.marker == true)
        #expect(p.payloadType == 96)
        #expect(p.sequenceNumber == 27023)
        #expect(p.timestamp == 3_653_407_706)
        #expect(p.ssrc == 476_325_762)
        #expect(p.csrcs == [])
        #expect(p.extensionProfile == nil)
        #expect(p.extensionData == [])
        #expect(p.payload == [0x98, 0x36, 0xBE, 0x88, 0x9E])
        #expect(p.paddingLength == 0)
        #expect(p.headerLength == 12)
    }

    @Test func parsesCSRCListExtensionAndPadding() throws {
        let p = try RTPPacket(bytes: Self.full)
        #expect(p.marker == false)
        #expect(p.payloadType == 111)
        #expect(p.sequenceNumber == 65535)
        #expect(p.timestamp == 2400)
        #expect(p.ssrc == 1001)
        #expect(p.csrcs == [0x1122_3344, 0x5566_7788])
        #expect(p.extensionProfile == 0xBEDE)
        #expect(p.extensionData == [0x10, 0xAA, 0x00, 0x00])
        #expect(p.payload == [1, 2, 3])
        #expect(p.paddingLength == 3)
        #expect(p.headerLength == 28)
    }

    @Test func paddingMayTakeTheWholePayload() throws {
        let p = try RTPPacket(bytes: hex("a0600001 00000000 00000001 00000004"))
        #expect(p.payload == [])
        #expect(p.paddingLength == 4)
    }

    @Test func serialisesGoldenPacketsByteForByte() throws {
        #expect(try RTPPacket(bytes: Self.simple).serialized() == Self.simple)
        #expect(try RTPPacket(bytes: Self.full).serialized() == Self.full)
    }

    @Test func builtPacketRoundTrips() throws {
        let p = RTPPacket(
            marker: true, payloadType: 111, sequenceNumber: 7, timestamp: 960, ssrc: 42,
            csrcs: [1, 2, 3], extensionProfile: 0x1000, extensionData: [1, 2, 3, 4, 5, 6, 7, 8],
            payload: Array(0..<50), paddingLength: 6)
        let bytes = p.serialized()
        #expect(bytes.count == 12 + 12 + 12 + 50 + 6)
        #expect(Array(bytes.prefix(2)) == [0xB3, 0xEF])
        #expect(try RTPPacket(bytes: bytes) == p)
    }

    @Test func serialisingZeroFillsAPartialExtensionWord() throws {
        let p = RTPPacket(
            payloadType: 0, sequenceNumber: 1, timestamp: 2, ssrc: 3,
            extensionProfile: 0xBEDE, extensionData: [0x10, 0xAA])
        #expect(p.serialized() == hex("90000001 00000002 00000003 bede0001 10aa0000"))
    }

    @Test func rejectsFewerThanTwelveBytes() {
        #expect(throws: RTPError.tooShort) { try RTPPacket(bytes: hex("80e0698fd9c293da1c6427")) }
        #expect(throws: RTPError.tooShort) { try RTPPacket(bytes: []) }
    }

    @Test func rejectsVersionOne() {
        #expect(throws: RTPError.badVersion(1)) { try RTPPacket(bytes: hex("40e0698f d9c293da 1c642782 00")) }
        #expect(throws: RTPError.badVersion(0)) { try RTPPacket(bytes: [UInt8](repeating: 0, count: 12)) }
    }

    @Test func rejectsCSRCCountPastTheEnd() {
        // CC = 3 but only two CSRC words follow.
        #expect(throws: RTPError.csrcOverrun) {
            try RTPPacket(bytes: hex("83600001 00000000 00000001 11111111 22222222"))
        }
    }

    @Test func rejectsExtensionPastTheEnd() {
        // X set but the 4-byte extension preamble is cut.
        #expect(throws: RTPError.extensionOverrun) { try RTPPacket(bytes: hex("90600001 00000000 00000001 bede")) }
        // Preamble says 2 words, only 1 follows.
        #expect(throws: RTPError.extensionOverrun) {
            try RTPPacket(bytes: hex("90600001 00000000 00000001 bede0002 10aa0000"))
        }
    }

    @Test func rejectsPaddingCountZeroOrLargerThanPayload() {
        #expect(throws: RTPError.badPadding) { try RTPPacket(bytes: hex("a0600001 00000000 00000001 010200")) }
        #expect(throws: RTPError.badPadding) { try RTPPacket(bytes: hex("a0600001 00000000 00000001 010205")) }
        // P set with nothing after the header: no count byte at all.
        #expect(throws: RTPError.badPadding) { try RTPPacket(bytes: hex("a0600001 00000000 00000001")) }
    }

    @Test func paddingIsCountedAfterTheExtensionNotInsideIt() {
        // Padding count 9 would reach into the extension: refused.
        #expect(throws: RTPError.badPadding) {
            try RTPPacket(bytes: hex("b0600001 00000000 00000001 bede0001 10aa0000 0109"))
        }
    }

    @Test func errorsDescribeThemselves() {
        #expect(RTPError.badVersion(1).description == "RTP version is 1, expected 2")
        #expect(RTPError.badPadding.description == "RTP padding count is 0 or larger than the packet payload")
    }
}
