import Testing
@testable import RTP

/// The hot path parses every datagram into one kept packet and reassembles frames in kept buffers:
/// these pin that storage is reused (same base address, so no allocation) and that values stay right.
@Suite struct RTPPacketReuseTests {
    static func address(_ bytes: [UInt8]) -> UInt? {
        bytes.withUnsafeBufferPointer { $0.baseAddress.map { UInt(bitPattern: $0) } }
    }

    @Test func parsingIntoAKeptPacketReusesItsArraysAndMatchesAFreshParse() throws {
        var packet = try RTPPacket(bytes: RTPPacketTests.full)
        packet.payload.reserveCapacity(64)
        packet.csrcs.reserveCapacity(15)
        let payloadStorage = Self.address(packet.payload)
        try packet.parse(RTPPacketTests.simple)
        #expect(packet == (try RTPPacket(bytes: RTPPacketTests.simple)))
        #expect(Self.address(packet.payload) == payloadStorage)
        try packet.parse(RTPPacketTests.full)
        #expect(packet == (try RTPPacket(bytes: RTPPacketTests.full)))
        #expect(Self.address(packet.payload) == payloadStorage)
    }

    @Test func aFailedParseLeavesTheKeptPacketAsItWas() throws {
        var packet = try RTPPacket(bytes: RTPPacketTests.simple)
        let before = packet
        #expect(throws: RTPError.csrcOverrun) {
            try packet.parse([0x82] + Array(RTPPacketTests.simple.dropFirst()).prefix(15))
        }
        #expect(throws: RTPError.tooShort) { try packet.parse([0x80, 0x60, 0x00]) }
        #expect(packet == before)
    }

    @Test func assignCopiesIntoTheTargetsOwnStorage() throws {
        let source = try RTPPacket(bytes: RTPPacketTests.full)
        var target = RTPPacket(payloadType: 0, sequenceNumber: 0, timestamp: 0, ssrc: 0)
        target.payload.reserveCapacity(32)
        let storage = Self.address(target.payload)
        target.assign(source)
        #expect(target == source)
        #expect(Self.address(target.payload) == storage)
        #expect(Self.address(target.payload) != Self.address(source.payload))
    }

    /// Frames alternate between two buffers: once a frame is dropped, the frame after next is built in
    /// its storage again instead of a new allocation.
    @Test func vp8FramesAreAssembledInTwoAlternatingBuffers() {
        var d = VP8Depacketizer()
        func frame(_ seq: UInt16, _ ts: UInt32) -> EncodedFrame? {
            d.push(
                RTPPacket(
                    marker: true, payloadType: 96, sequenceNumber: seq, timestamp: ts, ssrc: 1,
                    payload: [0x10, 0x50, 0x1A, 0x00, 0x9D, 0x01, 0x2A, UInt8(seq)]), afterLoss: false)
        }
        let first = frame(1, 3000).flatMap { Self.address($0.data) }
        let second = frame(2, 6000)
        let third = frame(3, 9000)
        #expect(second?.data == [0x50, 0x1A, 0x00, 0x9D, 0x01, 0x2A, 2])
        #expect(third?.data == [0x50, 0x1A, 0x00, 0x9D, 0x01, 0x2A, 3])
        #expect(first != nil)
        #expect(third.flatMap { Self.address($0.data) } == first)
        #expect(second.flatMap { Self.address($0.data) } != first)
    }
}
