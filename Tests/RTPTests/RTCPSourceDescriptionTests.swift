import Testing
@testable import RTP

@Suite struct RTCPSourceDescriptionTests {
    /// RFC 3550 §6.5 with two chunks, written out field by field.
    static let golden = hex(
        """
        82 ca 0008
        2a3b4c5d
        01 06 636f686f7374
        00 000000
        000003ea
        01 02 6162
        02 00
        06 01 78
        00 0000
        """)
    // 82: V=2, P=0, SC=2 · ca: PT=202 (SDES) · 0008: 9 words in all
    // chunk 1: SSRC 0x2a3b4c5d · CNAME (1), length 6, "cohost" · end of items (0) and 3 zeros to the word boundary
    // chunk 2: SSRC 1002 · CNAME, length 2, "ab" · NAME (2), length 0 · TOOL (6), length 1, "x" ·
    //          end of items and 2 zeros to the word boundary

    static let parsed = SourceDescription(chunks: [
        .init(source: 0x2A3B_4C5D, items: [.cname("cohost")]),
        .init(
            source: 1002,
            items: [
                .init(type: 1, value: [0x61, 0x62]), .init(type: 2, value: []),
                .init(type: 6, value: [0x78]),
            ]),
    ])

    @Test func parsesAndSerialisesTwoChunksWithPaddingAndAnEmptyItem() throws {
        let sdes = try SourceDescription(bytes: Self.golden)
        #expect(sdes == Self.parsed)
        #expect(sdes.chunks.map(\.cname) == ["cohost", "ab"])
        #expect(sdes.chunks[1].items[1].text == "")
        #expect(sdes.serialized() == Self.golden)
    }

    @Test func itemsEndingOnAWordBoundaryTakeAWholeWordOfZeros() throws {
        let bytes = hex("81ca0003 000004d2 01026162 00000000")
        let sdes = try SourceDescription(bytes: bytes)
        #expect(sdes == SourceDescription(chunks: [.init(source: 1234, items: [.cname("ab")])]))
        #expect(sdes.serialized() == bytes)
    }

    @Test func chunkWithoutItemsAndPacketWithoutChunks() throws {
        let bare = hex("81ca0002 000004d2 00000000")
        #expect(try SourceDescription(bytes: bare) == SourceDescription(chunks: [.init(source: 1234, items: [])]))
        #expect(SourceDescription(chunks: [.init(source: 1234, items: [])]).serialized() == bare)
        #expect(try SourceDescription(bytes: hex("80ca0000")) == SourceDescription(chunks: []))
        #expect(SourceDescription(chunks: []).serialized() == hex("80ca0000"))
    }

    @Test func rejectsTruncatedAndForeignPackets() {
        // SC says two chunks, the body holds one.
        #expect(throws: RTCPError.truncatedBody(packetType: 202)) {
            try SourceDescription(bytes: hex("82ca0004") + Self.golden[4..<20])
        }
        // The CNAME claims 5 bytes, 2 follow.
        #expect(throws: RTCPError.truncatedBody(packetType: 202)) {
            try SourceDescription(bytes: hex("81ca0002 00000001 01056162"))
        }
        // No end-of-items byte.
        #expect(throws: RTCPError.truncatedBody(packetType: 202)) {
            try SourceDescription(bytes: hex("81ca0002 00000001 01026162"))
        }
        // An item type with its length byte cut off by the end of the body.
        #expect(throws: RTCPError.truncatedBody(packetType: 202)) {
            try SourceDescription(bytes: hex("81ca0002 00000001 01026101"))
        }
        // P-bit padding of 2 would leave the end marker without room for its word: padding must be whole words.
        #expect(throws: RTCPError.badPadding(packetType: 202)) {
            try SourceDescription(bytes: hex("a1ca0002 00000001 00000002"))
        }
        #expect(throws: RTCPError.wrongPacketType(expected: 202, got: 203)) {
            try SourceDescription(bytes: hex("81cb0001 000004d2"))
        }
        #expect(throws: RTCPError.lengthOverrun(packetType: 202)) {
            try SourceDescription(bytes: Array(Self.golden.dropLast(4)))
        }
    }

    @Test func serialisingSkipsEndMarkerItemsAndCutsLongValues() throws {
        let sdes = SourceDescription(chunks: [
            .init(
                source: 7,
                items: [
                    .init(type: 0, value: [0x41]), .init(type: 7, value: Array(repeating: 0x6E, count: 300)),
                ])
        ])
        let bytes = sdes.serialized()
        // 4 header + 4 SSRC + 2 + 255 value + 1 end marker = 266, padded to 268.
        #expect(bytes.count == 268)
        #expect(Array(bytes.prefix(10)) == hex("81ca0042 00000007 07ff"))
        #expect(
            try SourceDescription(bytes: bytes)
                == SourceDescription(chunks: [
                    .init(source: 7, items: [.init(type: 7, value: Array(repeating: 0x6E, count: 255))])
                ]))
    }

    @Test func cnameIsCutAtAScalarBoundary() {
        // 254 ASCII bytes leave no room for the 2-byte "é".
        let item = SourceDescription.Item.cname(String(repeating: "a", count: 254) + "é")
        #expect(item.value.count == 254)
        #expect(SourceDescription.Item.cname("é@x").value == [0xC3, 0xA9, 0x40, 0x78])
        // Invalid UTF-8 from the wire still reads as text.
        #expect(SourceDescription.Item(type: 1, value: [0x61, 0xFF]).text == "a\u{FFFD}")
    }

    @Test func serialisingKeepsTheLengthFieldTrueForOversizedDescriptions() throws {
        // 1100 items of 257 bytes would need 282,704 body bytes; the length field describes at most 262,140.
        let item = SourceDescription.Item(type: 8, value: Array(repeating: 0x70, count: 255))
        let huge = SourceDescription(chunks: [
            .init(source: 1, items: Array(repeating: item, count: 1100)),
            .init(source: 2, items: [.cname("late")]),
        ])
        let bytes = huge.serialized()
        // Chunk 1: SSRC + 1019 items (261,883 bytes) + end marker = 261,888, where a 1020th item would
        // pass the limit. Chunk 2 (12 bytes) still fits: 4 header + 261,900 body.
        #expect(bytes.count == 261_904)
        #expect(Array(bytes.prefix(4)) == hex("82ca ffc3"))
        let back = try SourceDescription(bytes: bytes)
        #expect(back.chunks.map(\.source) == [1, 2])
        #expect(back.chunks.first?.items.count == 1019)
        #expect(back.chunks.last?.cname == "late")
    }

    @Test func serialisingDropsChunksPastThirtyOne() throws {
        let many = SourceDescription(chunks: (0..<40).map { .init(source: UInt32($0), items: [.cname("c")]) })
        let back = try SourceDescription(bytes: many.serialized())
        #expect(back.chunks.map(\.source) == (0..<31).map { UInt32($0) })
    }

    @Test func compoundParserDecodesItAndSerialisesItBack() throws {
        let datagram = RTCPSenderReportTests.bare + Self.golden + hex("81cb0001 2a3b4c5d")
        let packets = try parseCompoundRTCP(datagram)
        #expect(packets[1] == .sourceDescription(Self.parsed))
        #expect(serializeCompoundRTCP(packets) == datagram)
    }
}
