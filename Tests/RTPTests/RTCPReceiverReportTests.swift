import Testing
@testable import RTP

@Suite struct RTCPReceiverReportTests {
    static let golden = hex("81c90007 902f9e2e bc5e9a40 00000005 000046e1 00000111 09f36432 00024a79")

    @Test func parsesReportBlock() throws {
        let rr = try ReceiverReport(bytes: Self.golden)
        #expect(
            rr
                == ReceiverReport(
                    ssrc: 0x902F_9E2E,
                    reports: [
                        ReceptionReport(
                            ssrc: 0xBC5E_9A40, fractionLost: 0, totalLost: 5, extendedHighestSequence: 0x46E1,
                            jitter: 273, lastSenderReport: 0x09F3_6432, delaySinceLastSenderReport: 0x0002_4A79)
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
        // One byte of padding would leave a 3-byte profile extension that serialises differently (fuzz/rtcp).
        #expect(throws: RTCPError.badPadding(packetType: 201)) {
            try ReceiverReport(bytes: hex("a0c90002 902f9e2e 01020301"))
        }
        #expect(throws: RTCPError.truncatedBody(packetType: 201)) { try ReceiverReport(bytes: hex("80c90000")) }
        #expect(throws: RTCPError.lengthOverrun(packetType: 201)) {
            try ReceiverReport(bytes: hex("81c90007 902f9e2e"))
        }
    }
}
