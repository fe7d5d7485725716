import Testing
@testable import RTP

@Suite struct RTCPCompoundTests {
    static let sdes = hex("81ca0003 000004d2 01026162 00000000")

    @Test func splitsSenderReportSourceDescriptionAndGoodbye() throws {
        let datagram = RTCPSenderReportTests.bare + Self.sdes + hex("81cb0001 000004d2")
        let packets = try parseCompoundRTCP(datagram)
        #expect(
            packets == [
                .senderReport(
                    SenderReport(
                        ssrc: 1234, ntpTimestamp: 0xDA8B_D1FC_DDDD_A05A, rtpTimestamp: 0xAAF4_EDD5,
                        packetCount: 1, octetCount: 2)),
                .sourceDescription(
                    SourceDescription(chunks: [.init(source: 1234, items: [.init(type: 1, value: [0x61, 0x62])])])),
                .bye(Goodbye(sources: [1234])),
            ])
        #expect(serializeCompoundRTCP(packets) == datagram)
    }

    @Test func decodesReceiverReportPLIAndNACK() throws {
        let nack = hex("81cd0003 00000001 000003ea 00640001")
        let datagram = RTCPReceiverReportTests.golden + RTCPPictureLossIndicationTests.golden + nack
        let packets = try parseCompoundRTCP(datagram)
        #expect(packets.count == 3)
        #expect(packets[1] == .pli(PictureLossIndication(senderSSRC: 1, mediaSSRC: 1002)))
        #expect(
            packets[2]
                == .nack(
                    GenericNACK(
                        senderSSRC: 1, mediaSSRC: 1002,
                        entries: [.init(packetID: 100, lostBitmask: 1)])))
        #expect(serializeCompoundRTCP(packets) == datagram)
    }

    @Test func keepsApplicationFeedbackOtherThanREMBAndUnknownTypesRaw() throws {
        let app = hex("8fce0003 00000001 00000000 41424344")  // PSFB FMT=15 with identifier "ABCD"
        let xr = hex("80cf0001 00000001")  // XR (207): not decoded
        let packets = try parseCompoundRTCP(app + xr)
        #expect(packets == [.other(packetType: 206, bytes: app), .other(packetType: 207, bytes: xr)])
        #expect(serializeCompoundRTCP(packets) == app + xr)
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

    @Test func parsingIntoAReusedArrayReplacesItsPacketsAndABadDatagramLeavesItEmpty() throws {
        var packets: [RTCPPacket] = []
        packets.reserveCapacity(8)
        try parseCompoundRTCP(RTCPReceiverReportTests.golden + RTCPPictureLossIndicationTests.golden, into: &packets)
        #expect(packets.count == 2)
        try parseCompoundRTCP(RTCPPictureLossIndicationTests.golden, into: &packets)
        #expect(packets == [.pli(PictureLossIndication(senderSSRC: 1, mediaSSRC: 1002))])
        #expect(packets.capacity >= 8)
        #expect(throws: RTCPError.badVersion(1)) {
            try parseCompoundRTCP(RTCPPictureLossIndicationTests.golden + hex("41c90001 00000000"), into: &packets)
        }
        #expect(packets.isEmpty)
    }

    @Test func appendingToABufferWritesAfterWhatIsThereAndMatchesSerialized() {
        let pli = PictureLossIndication(senderSSRC: 1, mediaSSRC: 1002)
        var out: [UInt8] = [0xAA]
        pli.append(to: &out)
        RTCPPacket.pli(pli).append(to: &out)
        #expect(out == [0xAA] + RTCPPictureLossIndicationTests.golden + RTCPPictureLossIndicationTests.golden)
        #expect(pli.serialized() == RTCPPictureLossIndicationTests.golden)
    }

    @Test func errorsDescribeThemselves() {
        #expect(
            RTCPError.lengthOverrun(packetType: 201).description
                == "RTCP packet type 201: length field runs past the end of the datagram")
    }
}
