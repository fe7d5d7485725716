import Testing
@testable import RTP

@Suite struct VP8PayloadDescriptorTests {
    @Test func shortFormStartOfFrame() throws {
        let d = try VP8PayloadDescriptor(payload: [0x10, 0x50, 0x1A])
        #expect(d == VP8PayloadDescriptor.expected(start: true, headerLength: 1))
        #expect(d.startsFrame)
    }

    @Test func shortFormNonReferenceContinuationOfPartition3() throws {
        let d = try VP8PayloadDescriptor(payload: [0x23, 0xFF])
        #expect(d.nonReference == true)
        #expect(d.startOfPartition == false)
        #expect(d.partitionIndex == 3)
        #expect(d.extended == false)
        #expect(d.headerLength == 1)
        #expect(!d.startsFrame)
    }

    @Test func sevenBitPictureID() throws {
        let d = try VP8PayloadDescriptor(payload: [0x90, 0x80, 0x05, 0xAA])
        #expect(d == VP8PayloadDescriptor.expected(extended: true, start: true, pictureID: 5, headerLength: 3))
    }

    @Test func fifteenBitPictureID() throws {
        let d = try VP8PayloadDescriptor(payload: [0x90, 0x80, 0x81, 0x23, 0xAA])
        #expect(d == VP8PayloadDescriptor.expected(extended: true, start: true, pictureID: 0x0123, headerLength: 4))
    }

    @Test func allOptionalFields() throws {
        // I L T K; M=1 picture id 0x7FFF; TL0PICIDX 0x12; TID=2 Y=1 KEYIDX=3.
        let d = try VP8PayloadDescriptor(payload: [0x90, 0xF0, 0xFF, 0xFF, 0x12, 0b1010_0011, 0xAA])
        #expect(
            d
                == VP8PayloadDescriptor.expected(
                    extended: true, start: true, pictureID: 0x7FFF, tl0PicIdx: 0x12,
                    tid: 2, layerSync: true, keyIndex: 3, headerLength: 6))
    }

    @Test func keyIndexWithoutTemporalLayerSharesTheByte() throws {
        let d = try VP8PayloadDescriptor(payload: [0x80, 0x10, 0b1100_0101, 0xAA])
        #expect(d.tid == nil)
        #expect(d.layerSync == nil)
        #expect(d.keyIndex == 5)
        #expect(d.headerLength == 3)
    }

    @Test func descriptorFromFFmpegCapture() throws {
        let packet = try RTPPacket(bytes: hex(vp8CapturedPackets[0]))
        let d = try VP8PayloadDescriptor(payload: packet.payload)
        #expect(d == VP8PayloadDescriptor.expected(extended: true, start: true, pictureID: 0, headerLength: 4))
    }

    @Test func rejectsTruncatedDescriptors() {
        #expect(throws: RTPError.emptyPayload) { try VP8PayloadDescriptor(payload: []) }
        #expect(throws: RTPError.truncatedPayloadDescriptor) { try VP8PayloadDescriptor(payload: [0x10]) }
        #expect(throws: RTPError.truncatedPayloadDescriptor) { try VP8PayloadDescriptor(payload: [0x80]) }
        #expect(throws: RTPError.truncatedPayloadDescriptor) { try VP8PayloadDescriptor(payload: [0x90, 0x80]) }
        #expect(throws: RTPError.truncatedPayloadDescriptor) { try VP8PayloadDescriptor(payload: [0x90, 0x80, 0x81]) }
        #expect(throws: RTPError.truncatedPayloadDescriptor) { try VP8PayloadDescriptor(payload: [0x90, 0x40]) }
        #expect(throws: RTPError.truncatedPayloadDescriptor) { try VP8PayloadDescriptor(payload: [0x90, 0x20]) }
        // Descriptor complete but no VP8 byte after it.
        #expect(throws: RTPError.truncatedPayloadDescriptor) { try VP8PayloadDescriptor(payload: [0x90, 0x80, 0x05]) }
    }
}

extension VP8PayloadDescriptor {
    /// Shorthand for whole-value comparisons in these tests.
    static func expected(
        extended: Bool = false, start: Bool = false, pictureID: UInt16? = nil,
        tl0PicIdx: UInt8? = nil, tid: UInt8? = nil, layerSync: Bool? = nil,
        keyIndex: UInt8? = nil, headerLength: Int
    ) -> VP8PayloadDescriptor {
        VP8PayloadDescriptor(
            extended: extended, startOfPartition: start, pictureID: pictureID,
            tl0PicIdx: tl0PicIdx, tid: tid, layerSync: layerSync, keyIndex: keyIndex,
            headerLength: headerLength)
    }
}
