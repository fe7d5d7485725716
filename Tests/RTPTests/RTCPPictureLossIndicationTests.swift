import Testing
@testable import RTP

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
