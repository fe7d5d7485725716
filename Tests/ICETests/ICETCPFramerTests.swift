import Testing
@testable import ICE

/// RFC 4571 framing as ICE-TCP carries it: frames split across reads, many in one read, the largest frame, and the
/// header Cohost writes.
@Suite struct ICETCPFramerTests {
    /// A real Binding request (20-byte header, no attributes) and a 3-byte RTP-ish payload, each length-prefixed.
    static let stun: [UInt8] = [0x00, 0x01, 0x00, 0x00, 0x21, 0x12, 0xA4, 0x42] + [UInt8](repeating: 7, count: 12)
    static let stream: [UInt8] = [0x00, 0x14] + stun + [0x00, 0x03, 0x80, 0x60, 0x01]

    func frames(_ framer: inout ICETCPFramer) -> [[UInt8]] {
        var out: [[UInt8]] = []
        var frame: [UInt8] = []
        while framer.next(into: &frame) { out.append(frame) }
        return out
    }

    @Test func framesSplitAcrossReadsComeOutWholeAndInOrder() {
        for chunk in 1...Self.stream.count {
            var framer = ICETCPFramer(capacity: 16)
            var got: [[UInt8]] = []
            var offset = 0
            while offset < Self.stream.count {
                let end = min(offset + chunk, Self.stream.count)
                #expect(framer.append(Self.stream[offset..<end]) == end - offset)
                offset = end
                got += frames(&framer)
            }
            #expect(got == [Self.stun, [0x80, 0x60, 0x01]], "reads of \(chunk) bytes")
            #expect(framer.buffered == 0)
        }
    }

    @Test func aPartialFrameIsHeldUntilItsLastByte() {
        var framer = ICETCPFramer()
        framer.append(Self.stream.prefix(21))
        #expect(frames(&framer).isEmpty)
        #expect(framer.buffered == 21)
        framer.append(Self.stream[21..<22])
        #expect(frames(&framer) == [Self.stun])
        #expect(framer.buffered == 0)
    }

    @Test func theLargestFrameAndAnEmptyOneAreYielded() {
        let big = (0..<ICETCPFramer.maxFrame).map { UInt8(truncatingIfNeeded: $0) }
        var framer = ICETCPFramer(capacity: 64)
        let (high, low) = ICETCPFramer.header(big.count)
        #expect((high, low) == (0xFF, 0xFF))
        var taken = framer.append([high, low] + big + [0, 0])
        var got = frames(&framer)
        taken += framer.append([UInt8]())
        #expect(taken == big.count + 4)
        got += frames(&framer)
        #expect(got.map(\.count) == [65_535, 0])
        #expect(got.first == big)
    }

    @Test func readUsingWritesIntoTheFreeTailAndKeepsOnlyWhatItCounts() {
        var framer = ICETCPFramer(capacity: 16)
        let count = framer.read { space in
            #expect(space.count >= 4_096, "room for a whole read of media at once")
            for (i, byte) in [UInt8]([0, 2, 9, 9, 0xEE]).enumerated() { space[i] = byte }
            return 4
        }
        #expect(count == 4)
        #expect(framer.read { _ in -1 } == -1)
        var frame: [UInt8] = []
        #expect(framer.next(into: &frame) && frame == [9, 9])
        #expect(framer.buffered == 0)
    }
}
