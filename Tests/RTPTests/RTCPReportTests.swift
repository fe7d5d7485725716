import Testing
@testable import RTP

@Suite struct RTCPSenderReportTests {
    static let bare = hex("80c80006 000004d2 da8bd1fc dddda05a aaf4edd5 00000001 00000002")
    static let withBlock = hex("""
        81c8000c 000004d2 da8bd1fc dddda05a aaf4edd5 00000001 00000002
        bc5e9a40 10fffffe 000046e1 00000111 09f36432 00024a79
        """)
    static let block = ReceptionReport(ssrc: 0xBC5E_9A40, fractionLost: 0x10, totalLost: -2,
                                       extendedHighestSequence: 0x46E1, jitter: 273,
                                       lastSenderReport: 0x09F3_6432, delaySinceLastSenderReport: 0x0002_4A79)

    @Test func parsesSenderInfo() throws {
        let sr = try SenderReport(bytes: Self.bare)
        #expect(sr == SenderReport(ssrc: 1234, ntpTimestamp: 0xDA8B_D1FC_DDDD_A05A, rtpTimestamp: 0xAAF4_EDD5,
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
        let sr = SenderReport(ssrc: 1, ntpTimestamp: 2, rtpTimestamp: 3, packetCount: 4, octetCount: 5,
                              profileExtensions: [0xAB, 0xCD, 0xEF, 0x01])
        let bytes = sr.serialized()
        #expect(bytes.count == 32)
        #expect(Array(bytes.prefix(4)) == [0x80, 0xC8, 0x00, 0x07])
        #expect(try SenderReport(bytes: bytes) == sr)
    }

    @Test func clampsTotalLostToTwentyFourBits() throws {
        var block = Self.block
        block.totalLost = 50_000_000
        let sr = SenderReport(ssrc: 1, ntpTimestamp: 0, rtpTimestamp: 0, packetCount: 0, octetCount: 0,
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

@Suite struct RTCPReceiverReportTests {
    static let golden = hex("81c90007 902f9e2e bc5e9a40 00000005 000046e1 00000111 09f36432 00024a79")

    @Test func parsesReportBlock() throws {
        let rr = try ReceiverReport(bytes: Self.golden)
        #expect(rr == ReceiverReport(ssrc: 0x902F_9E2E, reports: [
            ReceptionReport(ssrc: 0xBC5E_9A40, fractionLost: 0, totalLost: 5, extendedHighestSequence: 0x46E1,
                            jitter: 273, lastSenderReport: 0x09F3_6432, delaySinceLastSenderReport: 0x0002_4A79),
        ]))
    }

    @Test func serialisesToTheGoldenBytes() throws {
        #expect(try ReceiverReport(bytes: Self.golden).serialized() == Self.golden)
        #expect(ReceiverReport(ssrc: 0x902F_9E2E).serialized() == hex("80c90001 902f9e2e"))
    }

    @Test func stripsPadding() throws {
        let rr = try ReceiverReport(bytes: hex("a0c90002 902f9e2e 00000004"))
        #expect(rr == ReceiverReport(ssrc: 0x902F_9E2E))
    }

    @Test func rejectsBadPaddingAndShortBody() {
        #expect(throws: RTCPError.badPadding(packetType: 201)) { try ReceiverReport(bytes: hex("a0c90001 902f9e00")) }
        #expect(throws: RTCPError.badPadding(packetType: 201)) { try ReceiverReport(bytes: hex("a0c90001 902f9e09")) }
        #expect(throws: RTCPError.truncatedBody(packetType: 201)) { try ReceiverReport(bytes: hex("80c90000")) }
        #expect(throws: RTCPError.lengthOverrun(packetType: 201)) { try ReceiverReport(bytes: hex("81c90007 902f9e2e")) }
    }
}

@Suite struct RTCPPictureLossIndicationTests {
    static let golden = hex("81ce0002 00000001 000003ea")

    @Test func parsesAndSerialises() throws {
        let pli = try PictureLossIndication(bytes: Self.golden)
        #expect(pli == PictureLossIndication(senderSSRC: 1, mediaSSRC: 1002))
        #expect(pli.serialized() == Self.golden)
    }

    @Test func rejectsOtherFeedbackTypesAndShortBody() {
        // FMT = 4 is a Full Intra Request, not a PLI.
        #expect(throws: RTCPError.wrongFeedbackType(expected: 1, got: 4)) {
            try PictureLossIndication(bytes: hex("84ce0004 00000001 00000000 000003ea 01000000"))
        }
        #expect(throws: RTCPError.truncatedBody(packetType: 206)) {
            try PictureLossIndication(bytes: hex("81ce0001 00000001"))
        }
        #expect(throws: RTCPError.wrongPacketType(expected: 206, got: 205)) {
            try PictureLossIndication(bytes: hex("81cd0002 00000001 000003ea"))
        }
    }
}

@Suite struct RTCPGoodbyeTests {
    @Test func parsesSourcesWithoutReason() throws {
        let bye = try Goodbye(bytes: hex("81cb0001 902f9e2e"))
        #expect(bye == Goodbye(sources: [0x902F_9E2E]))
        #expect(bye.serialized() == hex("81cb0001 902f9e2e"))
    }

    @Test func parsesAndSerialisesReason() throws {
        let golden = hex("81cb0002 12345678 03627965")
        #expect(try Goodbye(bytes: golden) == Goodbye(sources: [0x1234_5678], reason: "bye"))
        #expect(Goodbye(sources: [0x1234_5678], reason: "bye").serialized() == golden)
        // "ok" needs a zero byte to reach the word boundary.
        let padded = hex("82cb0003 00000001 00000002 026f6b00")
        #expect(Goodbye(sources: [1, 2], reason: "ok").serialized() == padded)
        #expect(try Goodbye(bytes: padded) == Goodbye(sources: [1, 2], reason: "ok"))
    }

    @Test func cutsLongReasonAtACharacterBoundary() throws {
        let reason = String(repeating: "é", count: 200)  // 400 UTF-8 bytes
        let bytes = Goodbye(sources: [1], reason: reason).serialized()
        #expect(bytes[8] == 254)
        #expect(try Goodbye(bytes: bytes).reason == String(repeating: "é", count: 127))
    }

    @Test func rejectsReasonPastTheEnd() {
        #expect(throws: RTCPError.truncatedBody(packetType: 203)) { try Goodbye(bytes: hex("81cb0002 12345678 05627965")) }
        #expect(throws: RTCPError.truncatedBody(packetType: 203)) { try Goodbye(bytes: hex("82cb0001 12345678")) }
    }
}

@Suite struct RTCPCompoundTests {
    static let sdes = hex("81ca0003 000004d2 01026162 00000000")

    @Test func splitsSenderReportSourceDescriptionAndGoodbye() throws {
        let datagram = RTCPSenderReportTests.bare + Self.sdes + hex("81cb0001 000004d2")
        let packets = try parseCompoundRTCP(datagram)
        #expect(packets == [
            .senderReport(SenderReport(ssrc: 1234, ntpTimestamp: 0xDA8B_D1FC_DDDD_A05A, rtpTimestamp: 0xAAF4_EDD5,
                                       packetCount: 1, octetCount: 2)),
            .other(packetType: 202, bytes: Self.sdes),
            .bye(Goodbye(sources: [1234])),
        ])
        #expect(serializeCompoundRTCP(packets) == datagram)
    }

    @Test func decodesReceiverReportAndPLIButKeepsOtherFeedbackRaw() throws {
        let nack = hex("81cd0003 00000001 000003ea 00640001")
        let datagram = RTCPReceiverReportTests.golden + RTCPPictureLossIndicationTests.golden + nack
        let packets = try parseCompoundRTCP(datagram)
        #expect(packets.count == 3)
        #expect(packets[1] == .pli(PictureLossIndication(senderSSRC: 1, mediaSSRC: 1002)))
        #expect(packets[2] == .other(packetType: 205, bytes: nack))
        #expect(serializeCompoundRTCP(packets) == datagram)
    }

    @Test func oneBadPacketFailsTheDatagram() {
        #expect(throws: RTCPError.tooShort) { try parseCompoundRTCP([]) }
        #expect(throws: RTCPError.tooShort) { try parseCompoundRTCP(RTCPSenderReportTests.bare + [0x80, 0x00]) }
        #expect(throws: RTCPError.badVersion(1)) {
            try parseCompoundRTCP(RTCPSenderReportTests.bare + hex("41c90001 00000000"))
        }
        #expect(throws: RTCPError.lengthOverrun(packetType: 201)) {
            try parseCompoundRTCP(RTCPSenderReportTests.bare + hex("81c90007 902f9e2e"))
        }
    }

    @Test func errorsDescribeThemselves() {
        #expect(RTCPError.lengthOverrun(packetType: 201).description
            == "RTCP packet type 201: length field runs past the end of the datagram")
    }
}
