import Testing
@testable import RTP

@Suite struct PacketClassifierTests {
    @Test func rtpPacketIsRTP() {
        #expect(classifyPacket(RTPPacketTests.simple) == .rtp)
        // PT 127 with the marker: second byte 255, above the RTCP range.
        #expect(classifyPacket(hex("80ff0001 00000000 00000001")) == .rtp)
        // PT 63 with the marker: second byte 191, just below the RTCP range.
        #expect(classifyPacket(hex("80bf0001 00000000 00000001")) == .rtp)
    }

    @Test func rtcpTypes192Through223AreRTCP() {
        #expect(classifyPacket(hex("80c80006 000004d2")) == .rtcp)  // SR
        #expect(classifyPacket(hex("81c90007 902f9e2e")) == .rtcp)  // RR
        #expect(classifyPacket(hex("81ce0002 00000001")) == .rtcp)  // PSFB
        #expect(classifyPacket(hex("80c00001 00000001")) == .rtcp)  // 192, lower edge
        #expect(classifyPacket(hex("80df0001 00000001")) == .rtcp)  // 223, upper edge
    }

    @Test func wrongVersionOrTooShortIsInvalid() {
        #expect(classifyPacket([]) == .invalid)
        #expect(classifyPacket([0x80]) == .invalid)
        #expect(classifyPacket(hex("40e0698f d9c293da 1c642782")) == .invalid)
        #expect(classifyPacket(hex("c0c80006 000004d2")) == .invalid)  // version 3
        #expect(classifyPacket(hex("80c80006 0000")) == .invalid)  // RTCP under 8 bytes
        #expect(classifyPacket(hex("80600001 00000000 000000")) == .invalid)  // RTP under 12 bytes
    }
}
