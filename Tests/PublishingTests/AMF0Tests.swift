import Testing
@testable import Publishing

@Suite("AMF0 encoding and decoding")
struct AMF0Tests {
    @Test("a number is marker 0x00 and an IEEE-754 big-endian double")
    func numberGolden() {
        #expect(encodeAMF0([.number(1)]) == [0x00, 0x3F, 0xF0, 0, 0, 0, 0, 0, 0])
        #expect(encodeAMF0([.number(-2.5)]) == [0x00, 0xC0, 0x04, 0, 0, 0, 0, 0, 0])
    }

    @Test("a string is marker 0x02, a 16-bit length and UTF-8")
    func stringGolden() {
        #expect(encodeAMF0([.string("abc")]) == [0x02, 0x00, 0x03, 0x61, 0x62, 0x63])
        #expect(encodeAMF0([.string("é")]) == [0x02, 0x00, 0x02, 0xC3, 0xA9])
    }

    @Test("a string over 64 KiB switches to the long-string marker with a 32-bit length")
    func longString() {
        let bytes = encodeAMF0([.string(String(repeating: "x", count: 70_000))])
        #expect(Array(bytes.prefix(5)) == [0x0C, 0x00, 0x01, 0x11, 0x70])
        #expect(bytes.count == 5 + 70_000)
    }

    @Test("an ECMA array has a 32-bit count, ordered members and the 00 00 09 end marker")
    func ecmaArrayGolden() {
        let bytes = encodeAMF0([.ecmaArray([AMF0Property("a", .number(2)), AMF0Property("b", .boolean(true))])])
        #expect(
            bytes == [
                0x08, 0x00, 0x00, 0x00, 0x02,
                0x00, 0x01, 0x61, 0x00, 0x40, 0, 0, 0, 0, 0, 0, 0,
                0x00, 0x01, 0x62, 0x01, 0x01,
                0x00, 0x00, 0x09,
            ])
    }

    @Test("an object is marker 0x03, members, then the object end marker")
    func objectGolden() {
        #expect(encodeAMF0([.object([AMF0Property("k", .null)])]) == [0x03, 0x00, 0x01, 0x6B, 0x05, 0x00, 0x00, 0x09])
        #expect(encodeAMF0([.object([])]) == [0x03, 0x00, 0x00, 0x09])
    }

    @Test("a strict array has a 32-bit count and no end marker; values follow each other")
    func strictArrayAndSequence() {
        #expect(
            encodeAMF0([.strictArray([.boolean(false), .null]), .string("")])
                == [0x0A, 0x00, 0x00, 0x00, 0x02, 0x01, 0x00, 0x05, 0x02, 0x00, 0x00])
    }

    @Test("decoding what was encoded gives the same values, keys in order")
    func roundTrip() throws {
        let values: [AMF0Value] = [
            .string("onVoiceLevels"),
            .object([
                AMF0Property("speaker", .string("alice")),
                AMF0Property("levels", .strictArray([.number(0.5), .number(0)])),
                AMF0Property("nested", .ecmaArray([AMF0Property("on", .boolean(true))])),
            ]),
            .null,
        ]
        #expect(try decodeAMF0(encodeAMF0(values)) == values)
    }

    @Test("truncated input throws with the offset of the unfinished value")
    func truncated() {
        #expect(throws: AMF0DecodeError.truncated(offset: 1)) { try decodeAMF0([0x00, 0x3F, 0xF0]) }
        #expect(throws: AMF0DecodeError.truncated(offset: 3)) { try decodeAMF0([0x02, 0x00, 0x05, 0x61]) }
        #expect(throws: AMF0DecodeError.truncated(offset: 4)) { try decodeAMF0([0x03, 0x00, 0x01, 0x6B]) }
    }

    @Test("a strict array claiming more elements than bytes left is refused before allocating")
    func hostileCount() {
        #expect(throws: AMF0DecodeError.truncated(offset: 0)) { try decodeAMF0([0x0A, 0xFF, 0xFF, 0xFF, 0xFF, 0x05]) }
    }

    @Test("unknown markers and deep nesting are refused")
    func refusals() {
        #expect(throws: AMF0DecodeError.unsupportedMarker(0x11, offset: 0)) { try decodeAMF0([0x11]) }
        let deep: [UInt8] = (0..<40).flatMap { _ in [0x0A, 0x00, 0x00, 0x00, 0x01] } + [0x05]
        #expect(throws: AMF0DecodeError.tooDeep) { try decodeAMF0(deep) }
    }
}
