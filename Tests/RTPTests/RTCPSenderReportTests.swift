import Testing
@testable import RTP

@Suite struct RTCPSenderReportTests {
    static let bare = hex("80c80006 000004d2 da8bd1fc dddda05a aaf4edd5 00000001 00000002")
    static let withBlock = hex(
        """
        81c8000c 000004d2 da8bd1fc dddda05a aaf4edd5 00000001 00000002
        bc5e9a40 10fffffe 000046e1 00000111 09f36432 00024a79
        """)
    static let block = ReceptionReport(
        ssrc: 0xBC5E_9A40, fractionLost: 0x10, totalLost: -2,
        extendedHighestSequence: 0x46E1, jitter: 273,
        lastSenderReport: 0x09F3_6432, delaySinceLastSenderReport: 0x0002_4A79)

    @Test func parsesSenderInfo() throws {
        let sr = try SenderReport(bytes: Self.bare)
        #expect(
            sr
                == SenderReport(
                    ssrc: 1234, ntpTimestamp: 0xDA8B_D1FC_DDDD_A05A, rtpTimestamp: 0xAAF4_EDD5,
                    packetCount: 1, octetCount: 2))
    }

    @Test func parsesReportBlockWithNegativeCumulativeLoss() throws {
        let sr = try SenderReport(bytes: Self.withBlock)
        #expect(sr.reports == [Self.block])
        #expect(sr.reports.first?.totalLost == -2)
        #expect(sr.profileExtensions == [])
    }

    @Test func serialisesToTheGoldenBytes() throws {
        #expect(try SenderReport(bytes: Self.bare).serialized() == Self.bare)
        #expect(try SenderReport(bytes: Self.withBlock).serialized() == Self.withBlock)
    }

    @Test func keepsProfileExtensions() throws {
        let sr = SenderReport(
            ssrc: 1, ntpTimestamp: 2, rtpTimestamp: 3, packetCount: 4, octetCount: 5,
            profileExtensions: [0xAB, 0xCD, 0xEF, 0x01])
        let bytes = sr.serialized()
        #expect(bytes.count == 32)
        #expect(Array(bytes.prefix(4)) == [0x80, 0xC8, 0x00, 0x07])
        #expect(try SenderReport(bytes: bytes) == sr)
    }

    @Test func clampsTotalLostToTwentyFourBits() throws {
        var block = Self.block
        block.totalLost = 50_000_000
        let sr = SenderReport(
            ssrc: 1, ntpTimestamp: 0, rtpTimestamp: 0, packetCount: 0, octetCount: 0,
            reports: [block])
        #expect(try SenderReport(bytes: sr.serialized()).reports.first?.totalLost == 0x7F_FFFF)
    }

    @Test func rejectsTruncatedSenderInfoAndBlocks() {
        #expect(throws: RTCPError.truncatedBody(packetType: 200)) { try SenderReport(bytes: hex("80c80001 000004d2")) }
        // RC = 2 with room for one block.
        var twoBlocks = Self.withBlock
        twoBlocks[0] = 0x82
        #expect(throws: RTCPError.truncatedBody(packetType: 200)) { try SenderReport(bytes: twoBlocks) }
    }

    @Test func rejectsOtherPacketTypes() {
        #expect(throws: RTCPError.wrongPacketType(expected: 200, got: 201)) {
            try SenderReport(bytes: RTCPReceiverReportTests.golden)
        }
    }
}
