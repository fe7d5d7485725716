import Testing
@testable import RTP

@Suite struct RTCPReceiverEstimatedMaximumBitrateTests {
    typealias REMB = ReceiverEstimatedMaximumBitrate

    /// draft-alvestrand-rmcat-remb-03 §2.2, written out field by field.
    static let golden = hex(
        """
        8f ce 0006
        2a3b4c5d
        00000000
        52454d42
        02 0bd090
        000003ea
        deadbeef
        """)
    // 8f: V=2, P=0, FMT=15 · ce: PT=206 (PSFB) · 0006: 7 words in all
    // 2a3b4c5d: SSRC of packet sender · 00000000: SSRC of media source (0)
    // 52454d42: "REMB"
    // 02 0bd090: Num SSRC 2; 0x0bd090 = 000010 111101000010010000: BR Exp 2, BR Mantissa 250,000
    //            → 250,000 << 2 = 1,000,000 b/s
    // 000003ea, deadbeef: the SSRCs the estimate covers

    @Test func parsesAndSerialisesTheGoldenPacket() throws {
        let remb = try REMB(bytes: Self.golden)
        #expect(remb == REMB(senderSSRC: 0x2A3B_4C5D, bitrate: 1_000_000, ssrcs: [1002, 0xDEAD_BEEF]))
        #expect(remb.mediaSSRC == 0)
        #expect(remb.serialized() == Self.golden)
    }

    @Test func encodesWithTheSmallestExponentWhoseMantissaFits() {
        #expect(REMB.encode(0) == (0, 0))
        #expect(REMB.encode(200_000) == (0, 200_000))
        #expect(REMB.encode(262_143) == (0, 0x3FFFF))  // the largest 18-bit mantissa
        #expect(REMB.encode(262_144) == (1, 131_072))
        #expect(REMB.encode(1_000_000) == (2, 250_000))
        #expect(REMB.encode(2_500_000) == (4, 156_250))
        #expect(REMB.encode(10_000_000_000) == (16, 152_587))
        #expect(REMB.encode(UInt64.max) == (46, 0x3FFFF))
    }

    @Test func serialisingRoundsDownToEighteenSignificantBits() throws {
        // 10 Gb/s needs exponent 16: the low 16 bits go, 9,999,941,632 b/s remain (never more than measured).
        let remb = REMB(senderSSRC: 1, bitrate: 10_000_000_000, ssrcs: [5])
        let bytes = remb.serialized()
        #expect(bytes == hex("8fce0005 00000001 00000000 52454d42 0142540b 00000005"))
        #expect(try REMB(bytes: bytes).bitrate == 9_999_941_632)
        #expect(try REMB(bytes: REMB(senderSSRC: 1, bitrate: 1_000_003, ssrcs: []).serialized()).bitrate == 1_000_000)
    }

    @Test func decodingSaturatesInsteadOfOverflowing() {
        #expect(REMB.decode(exponent: 2, mantissa: 250_000) == 1_000_000)
        #expect(REMB.decode(exponent: 63, mantissa: 0) == 0)
        #expect(REMB.decode(exponent: 63, mantissa: 1) == 1 << 63)
        #expect(REMB.decode(exponent: 46, mantissa: 0x3FFFF) == REMB.maxBitrate)
        #expect(REMB.decode(exponent: 47, mantissa: 0x3FFFF) == REMB.maxBitrate)  // 65 bits
        #expect(REMB.decode(exponent: 63, mantissa: 2) == REMB.maxBitrate)
        #expect(REMB.maxBitrate == 0xFFFF_C000_0000_0000)
        // Only the low 6 and 18 bits are fields.
        #expect(REMB.decode(exponent: 0x42, mantissa: 0x4_0001) == 4)
    }

    @Test func largestWireValueParsesToTheCeiling() throws {
        // Exp 63 and mantissa 0x3ffff: 24 one bits after an SSRC count of 0.
        let bytes = hex("8fce0004 00000001 00000000 52454d42 00ffffff")
        let remb = try REMB(bytes: bytes)
        #expect(remb.bitrate == REMB.maxBitrate)
        #expect(remb.ssrcs == [])
        // Written back canonically: exponent 46, mantissa 0x3ffff.
        #expect(remb.serialized() == hex("8fce0004 00000001 00000000 52454d42 00bbffff"))
    }

    @Test func otherApplicationFeedbackIsNotREMB() {
        #expect(throws: RTCPError.wrongApplicationIdentifier) {
            try REMB(bytes: hex("8fce0004 2a3b4c5d 00000000 41424344 020bd090"))
        }
        // Shorter than a REMB, but a whole application-layer message: not a REMB rather than a broken one.
        #expect(throws: RTCPError.wrongApplicationIdentifier) {
            try REMB(bytes: hex("8fce0003 2a3b4c5d 00000000 41424344"))
        }
        #expect(throws: RTCPError.wrongApplicationIdentifier) {
            try REMB(bytes: hex("8fce0002 2a3b4c5d 00000000"))
        }
    }

    @Test func rejectsTruncatedAndForeignPackets() {
        // The identifier, but no Num SSRC / bitrate word.
        #expect(throws: RTCPError.truncatedBody(packetType: 206)) {
            try REMB(bytes: hex("8fce0003 2a3b4c5d 00000000 52454d42"))
        }
        // Num SSRC 2, one SSRC present.
        #expect(throws: RTCPError.truncatedBody(packetType: 206)) {
            try REMB(bytes: hex("8fce0005 2a3b4c5d 00000000 52454d42 020bd090 000003ea"))
        }
        // No room for the media source SSRC.
        #expect(throws: RTCPError.truncatedBody(packetType: 206)) {
            try REMB(bytes: hex("8fce0001 2a3b4c5d"))
        }
        #expect(throws: RTCPError.lengthOverrun(packetType: 206)) {
            try REMB(bytes: Array(Self.golden.dropLast(4)))
        }
        #expect(throws: RTCPError.wrongFeedbackType(expected: 15, got: 1)) {
            try REMB(bytes: RTCPPictureLossIndicationTests.golden)
        }
        #expect(throws: RTCPError.wrongPacketType(expected: 206, got: 205)) {
            try REMB(bytes: hex("8fcd0006") + Self.golden.dropFirst(4))
        }
    }

    @Test func serialisingKeepsAtMost255SSRCs() throws {
        let remb = REMB(senderSSRC: 1, bitrate: 64_000, ssrcs: (0..<300).map { UInt32($0) })
        let bytes = remb.serialized()
        #expect(bytes.count == 20 + 4 * 255)
        #expect(Array(bytes[16..<20]) == hex("ff00fa00"))  // 255 SSRCs, exp 0, mantissa 64,000
        #expect(try REMB(bytes: bytes).ssrcs == (0..<255).map { UInt32($0) })
    }

    @Test func compoundParserDecodesREMBAndKeepsOtherApplicationFeedbackRaw() throws {
        let app = hex("8fce0003 00000001 00000000 41424344")
        let datagram = RTCPReceiverReportTests.golden + Self.golden + app
        let packets = try parseCompoundRTCP(datagram)
        #expect(packets.count == 3)
        #expect(packets[1] == .remb(REMB(senderSSRC: 0x2A3B_4C5D, bitrate: 1_000_000, ssrcs: [1002, 0xDEAD_BEEF])))
        #expect(packets[2] == .other(packetType: 206, bytes: app))
        #expect(serializeCompoundRTCP(packets) == datagram)
    }
}
