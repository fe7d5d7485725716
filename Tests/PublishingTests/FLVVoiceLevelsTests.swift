import Testing
@testable import Publishing

@Suite("FLV voice levels")
struct FLVVoiceLevelsTests {
    /// The example of protocol/flv-voice-levels.md, written by an independent encoder (Python struct):
    /// alice 67 and bob 0, alice speaking, at 1200 ms; the whole serialised tag with PreviousTagSize.
    static let golden: [UInt8] = [
        0x12, 0x00, 0x00, 0x68, 0x00, 0x04, 0xB0, 0x00, 0x00, 0x00, 0x00,  // script tag, 104 bytes, 1200 ms
        // "onVoiceLevels"
        0x02, 0x00, 0x0D, 0x6F, 0x6E, 0x56, 0x6F, 0x69, 0x63, 0x65, 0x4C, 0x65, 0x76, 0x65, 0x6C, 0x73,
        0x08, 0x00, 0x00, 0x00, 0x03,  // ECMA array of 3
        0x00, 0x06, 0x6C, 0x65, 0x76, 0x65, 0x6C, 0x73, 0x03,  // levels: object
        0x00, 0x05, 0x61, 0x6C, 0x69, 0x63, 0x65, 0x00, 0x40, 0x50, 0xC0, 0x00, 0x00, 0x00, 0x00, 0x00,  // alice: 67
        0x00, 0x03, 0x62, 0x6F, 0x62, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // bob: 0
        0x00, 0x00, 0x09,  // end of levels
        0x00, 0x0D, 0x61, 0x63, 0x74, 0x69, 0x76, 0x65, 0x53, 0x70, 0x65, 0x61, 0x6B, 0x65, 0x72,  // activeSpeaker
        0x02, 0x00, 0x05, 0x61, 0x6C, 0x69, 0x63, 0x65,  // "alice"
        0x00, 0x04, 0x74, 0x69, 0x6D, 0x65, 0x00, 0x40, 0x92, 0xC0, 0x00, 0x00, 0x00, 0x00, 0x00,  // time: 1200
        0x00, 0x00, 0x09,  // end of the ECMA array
        0x00, 0x00, 0x00, 0x73,  // PreviousTagSize 115
    ]

    @Test func theDocumentedExampleIsByteExact() {
        let tag = FLVMuxer.voiceLevelsTag(
            levels: [("alice", 67), ("bob", 0)], activeSpeaker: "alice", timestampMs: 1200)
        #expect(tag.kind == .script)
        #expect(tag.timestampMs == 1200)
        #expect(tag.isKeyframe && !tag.isSequenceHeader && !tag.isMetadata)
        #expect(tag.serialized() == Self.golden)
    }

    @Test func roundTripsThroughTheAMF0DecoderWithExactValues() throws {
        let tag = FLVMuxer.voiceLevelsTag(
            levels: [("alice", 67), ("bob", 0), ("carol", 100)],
            activeSpeaker: "carol", timestampMs: 86_400_000)
        let values = try decodeAMF0(tag.body)
        #expect(
            values == [
                .string("onVoiceLevels"),
                .ecmaArray([
                    AMF0Property(
                        "levels",
                        .object([
                            AMF0Property("alice", .number(67)),
                            AMF0Property("bob", .number(0)),
                            AMF0Property("carol", .number(100)),
                        ])),
                    AMF0Property("activeSpeaker", .string("carol")),
                    AMF0Property("time", .number(86_400_000)),
                ]),
            ])
        #expect(values.last?["levels"]?["alice"] == .number(67))
    }

    @Test func theHeaderCarriesType18TheSizeAndTheExtendedTimestamp() {
        // 0x01020304 ms needs the extended timestamp byte: lower 24 bits 02 03 04, then 01.
        let tag = FLVMuxer.voiceLevelsTag(levels: [], activeSpeaker: nil, timestampMs: 0x0102_0304)
        let bytes = tag.serialized()
        let size = tag.body.count
        #expect(
            Array(bytes.prefix(11)) == [
                0x12, UInt8(size >> 16), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF),
                0x02, 0x03, 0x04, 0x01, 0x00, 0x00, 0x00,
            ])
        #expect(size == 16 + 5 + 9 + 3 + 15 + 1 + 15 + 3)  // no users, null speaker
        #expect(Array(bytes.suffix(4)) == [0x00, 0x00, 0x00, UInt8(11 + size)])
    }

    @Test func noSpeakerIsNullAndNoUsersIsAnEmptyObject() throws {
        let tag = FLVMuxer.voiceLevelsTag(levels: [], activeSpeaker: nil, timestampMs: 0)
        let values = try decodeAMF0(tag.body)
        #expect(values.last?["levels"] == .object([]))
        #expect(values.last?["activeSpeaker"] == .null)
        #expect(values.last?["time"] == .number(0))
    }

    @Test func levelsAreClampedAndUnwritableOrRepeatedIdsLeftOut() throws {
        let tooLong = String(repeating: "x", count: 65)
        let longest = String(repeating: "é", count: 32)  // 64 UTF-8 bytes: allowed
        let tag = FLVMuxer.voiceLevelsTag(
            levels: [("a", 140), ("", 50), (tooLong, 50), ("b", -3), ("a", 10), (longest, 5)],
            activeSpeaker: tooLong, timestampMs: 400)
        let values = try decodeAMF0(tag.body)
        #expect(
            values.last?["levels"]
                == .object([
                    AMF0Property("a", .number(100)), AMF0Property("b", .number(0)),
                    AMF0Property(longest, .number(5)),
                ]))
        #expect(values.last?["activeSpeaker"] == .null)
    }

    @Test func theBodyIsBoundedBy64UsersWithTheLongestIds() throws {
        let users = (0..<100).map { i in
            (userId: String(repeating: "0", count: 64 - String(i).count) + String(i), level: 100)
        }
        let tag = FLVMuxer.voiceLevelsTag(levels: users, activeSpeaker: users[99].userId, timestampMs: 0xFFFF_FFFF)
        #expect(tag.body.count == FLVVoiceLevels.maxBodySize)
        #expect(FLVVoiceLevels.maxBodySize == 4_933)
        let levels = try decodeAMF0(tag.body).last?["levels"]
        guard case .object(let members) = levels else {
            Issue.record("levels is not an object: \(String(describing: levels))")
            return
        }
        #expect(members.map(\.name) == users.prefix(64).map(\.userId))
    }
}
