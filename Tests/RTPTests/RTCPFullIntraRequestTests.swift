import Testing
@testable import RTP

@Suite struct RTCPFullIntraRequestTests {
    /// RFC 5104 §4.3.1 with two FCI entries, written out field by field.
    static let golden = hex(
        """
        84 ce 0006
        2a3b4c5d
        00000000
        000003ea
        07 000000
        deadbeef
        ff 000000
        """)
    // 84: V=2, P=0, FMT=4 · ce: PT=206 (PSFB) · 0006: 7 words in all
    // 2a3b4c5d: SSRC of packet sender · 00000000: SSRC of media source (unused, 0)
    // 000003ea 07 000000: ask source 1002, command sequence number 7, reserved
    // deadbeef ff 000000: ask source 0xdeadbeef, command sequence number 255, reserved

    @Test func parsesAndSerialisesTheGoldenPacket() throws {
        let fir = try FullIntraRequest(bytes: Self.golden)
        #expect(
            fir
                == FullIntraRequest(
                    senderSSRC: 0x2A3B_4C5D,
                    entries: [
                        .init(ssrc: 1002, sequenceNumber: 7),
                        .init(ssrc: 0xDEAD_BEEF, sequenceNumber: 255),
                    ]))
        #expect(fir.mediaSSRC == 0)
        #expect(fir.serialized() == Self.golden)
    }

    @Test func keepsANonZeroMediaSSRCAndIgnoresReservedBits() throws {
        // Some senders put the media SSRC in the common header too; reserved bits are not ours to keep.
        let fir = try FullIntraRequest(bytes: hex("84ce0004 00000001 000003ea 000003ea 01ffffff"))
        #expect(
            fir
                == FullIntraRequest(
                    senderSSRC: 1, mediaSSRC: 1002,
                    entries: [.init(ssrc: 1002, sequenceNumber: 1)]))
        #expect(fir.serialized() == hex("84ce0004 00000001 000003ea 000003ea 01000000"))
    }

    @Test func rejectsTruncatedAndForeignPackets() {
        // Half an FCI entry (one word of the two).
        #expect(throws: RTCPError.truncatedBody(packetType: 206)) {
            try FullIntraRequest(bytes: hex("84ce0003 2a3b4c5d 00000000 000003ea"))
        }
        #expect(throws: RTCPError.truncatedBody(packetType: 206)) {
            try FullIntraRequest(bytes: hex("84ce0001 2a3b4c5d"))
        }
        #expect(throws: RTCPError.lengthOverrun(packetType: 206)) {
            try FullIntraRequest(bytes: Array(Self.golden.prefix(24)))
        }
        #expect(throws: RTCPError.wrongFeedbackType(expected: 4, got: 1)) {
            try FullIntraRequest(bytes: RTCPPictureLossIndicationTests.golden)
        }
        #expect(throws: RTCPError.wrongPacketType(expected: 206, got: 205)) {
            try FullIntraRequest(bytes: hex("84cd0004 2a3b4c5d 00000000 000003ea 07000000"))
        }
        #expect(throws: RTCPError.tooShort) { try FullIntraRequest(bytes: hex("84ce00")) }
    }

    @Test func compoundParserTellsFIRFromPLI() throws {
        let datagram = RTCPReceiverReportTests.golden + RTCPPictureLossIndicationTests.golden + Self.golden
        let packets = try parseCompoundRTCP(datagram)
        #expect(packets.count == 3)
        #expect(packets[1] == .pli(PictureLossIndication(senderSSRC: 1, mediaSSRC: 1002)))
        #expect(packets[2] == .fir(try FullIntraRequest(bytes: Self.golden)))
        #expect(serializeCompoundRTCP(packets) == datagram)
    }
}
