import Testing
@testable import RTP

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

    @Test func dropsAReasonThatIsNotUTF8ButKeepsTheSources() throws {
        let bye = try Goodbye(bytes: hex("81cb0002 12345678 02ff6100"))
        #expect(bye == Goodbye(sources: [0x1234_5678]))
        #expect(try Goodbye(bytes: bye.serialized()) == bye)
    }

    @Test func rejectsReasonPastTheEnd() {
        #expect(throws: RTCPError.truncatedBody(packetType: 203)) {
            try Goodbye(bytes: hex("81cb0002 12345678 05627965"))
        }
        #expect(throws: RTCPError.truncatedBody(packetType: 203)) { try Goodbye(bytes: hex("82cb0001 12345678")) }
    }
}
