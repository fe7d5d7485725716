import TestSupport
import Testing
@testable import RTP

@Suite struct RTCPGenericNACKTests {
    /// RFC 4585 §6.2.1, written out field by field.
    static let golden = hex(
        """
        81 cd 0004
        2a3b4c5d
        000003ea
        0064 0005
        fffe 8001
        """)
    // 81: V=2, P=0, FMT=1 · cd: PT=205 (RTPFB) · 0004: 5 words in all
    // 2a3b4c5d: SSRC of packet sender · 000003ea: SSRC of media source (1002)
    // 0064 0005: PID 100, BLP bits 0 and 2 → 101 and 103 lost too
    // fffe 8001: PID 65534, BLP bits 0 and 15 → 65535 and 65534 + 16 = 14 (wrapped) lost too

    @Test func parsesAndSerialisesTheGoldenPacket() throws {
        let nack = try GenericNACK(bytes: Self.golden)
        #expect(
            nack
                == GenericNACK(
                    senderSSRC: 0x2A3B_4C5D, mediaSSRC: 1002,
                    entries: [
                        .init(packetID: 100, lostBitmask: 0x0005),
                        .init(packetID: 65534, lostBitmask: 0x8001),
                    ]))
        #expect(nack.lostSequenceNumbers == [100, 101, 103, 65534, 65535, 14])
        #expect(nack.serialized() == Self.golden)
    }

    @Test func packsLostSequenceNumbersAcrossTheWrapIntoPIDAndBLP() {
        // Unsorted, with a duplicate; the widest gap is 40 → 65533, so the run starts at 65533.
        let nack = GenericNACK(senderSSRC: 1, mediaSSRC: 2, lostSequenceNumbers: [3, 40, 0, 65535, 18, 65533, 17, 0])
        #expect(
            nack.entries == [
                .init(packetID: 65533, lostBitmask: 0b10_0110),  // 65535 (+2), 0 (+3), 3 (+6)
                .init(packetID: 17, lostBitmask: 0b1),  // 18 (+1)
                .init(packetID: 40, lostBitmask: 0),
            ])
        #expect(nack.lostSequenceNumbers == [65533, 65535, 0, 3, 17, 18, 40])
        #expect(nack.serialized() == hex("81cd0005 00000001 00000002 fffd0026 00110001 00280000"))
    }

    @Test func bitmaskReachesSixteenPacketsPastThePID() {
        let sixteen = GenericNACK(senderSSRC: 1, mediaSSRC: 2, lostSequenceNumbers: [10, 26])
        #expect(sixteen.entries == [.init(packetID: 10, lostBitmask: 0x8000)])
        let seventeen = GenericNACK(senderSSRC: 1, mediaSSRC: 2, lostSequenceNumbers: [10, 27])
        #expect(seventeen.entries == [.init(packetID: 10), .init(packetID: 27)])
        let single = GenericNACK(senderSSRC: 1, mediaSSRC: 2, lostSequenceNumbers: [65535])
        #expect(single.entries == [.init(packetID: 65535)])
        #expect(GenericNACK(senderSSRC: 1, mediaSSRC: 2, lostSequenceNumbers: []).entries == [])
    }

    @Test func everyLostNumberOfAPackedListUnpacksOnce() throws {
        var rng = SplitMix64(seed: 0x4E41_434B)
        for _ in 0..<500 {
            let base = UInt16.random(in: 0...UInt16.max, using: &rng)
            let lost = (0..<Int.random(in: 1...60, using: &rng)).map { _ in
                base &+ UInt16.random(in: 0...300, using: &rng)
            }
            let nack = GenericNACK(senderSSRC: 1, mediaSSRC: 2, lostSequenceNumbers: lost)
            let unpacked = nack.lostSequenceNumbers
            #expect(unpacked.count == Set(lost).count)
            #expect(Set(unpacked) == Set(lost))
            #expect(try GenericNACK(bytes: nack.serialized()) == nack)
        }
    }

    @Test func rejectsTruncatedAndForeignPackets() {
        // No room for the media source SSRC.
        #expect(throws: RTCPError.truncatedBody(packetType: 205)) {
            try GenericNACK(bytes: hex("81cd0001 2a3b4c5d"))
        }
        // Padding of 2 would leave half an entry: padding must be whole words.
        #expect(throws: RTCPError.badPadding(packetType: 205)) {
            try GenericNACK(bytes: hex("a1cd0003 2a3b4c5d 000003ea 00640002"))
        }
        #expect(throws: RTCPError.lengthOverrun(packetType: 205)) {
            try GenericNACK(bytes: Array(Self.golden.dropLast()))
        }
        // FMT=15 on RTPFB is transport-wide congestion control feedback, not a NACK.
        #expect(throws: RTCPError.wrongFeedbackType(expected: 1, got: 15)) {
            try GenericNACK(bytes: hex("8fcd0003 2a3b4c5d 000003ea 00640005"))
        }
        // The same layout on PSFB (206) would be a PLI with FCI.
        #expect(throws: RTCPError.wrongPacketType(expected: 205, got: 206)) {
            try GenericNACK(bytes: hex("81ce0003 2a3b4c5d 000003ea 00640005"))
        }
        #expect(throws: RTCPError.badVersion(1)) {
            try GenericNACK(bytes: hex("41cd0003 2a3b4c5d 000003ea 00640005"))
        }
    }

    /// RFC 4585 asks for at least one entry, but an empty NACK is harmless, and refusing it would
    /// also throw away the reports sharing its compound datagram.
    @Test func acceptsANACKWithoutEntries() throws {
        let empty = hex("81cd0002 2a3b4c5d 000003ea")
        #expect(try GenericNACK(bytes: empty) == GenericNACK(senderSSRC: 0x2A3B_4C5D, mediaSSRC: 1002, entries: []))
        #expect(try parseCompoundRTCP(RTCPReceiverReportTests.golden + empty).count == 2)
    }

    @Test func compoundParserDecodesItAndSerialisesItBack() throws {
        let datagram = RTCPReceiverReportTests.golden + Self.golden
        let packets = try parseCompoundRTCP(datagram)
        #expect(packets.last == .nack(try GenericNACK(bytes: Self.golden)))
        #expect(serializeCompoundRTCP(packets) == datagram)
    }
}
