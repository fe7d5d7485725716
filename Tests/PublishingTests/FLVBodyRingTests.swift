import Testing
@testable import Publishing

/// The tag bodies of the programme's hot path: reused in place once released, never while a tag holds them.
@Suite("FLVBodyRing")
struct FLVBodyRingTests {
    private static func address(_ bytes: [UInt8]) -> UInt {
        bytes.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
    }

    @Test("a body no tag holds any more is rebuilt in the same storage when the ring comes round to it")
    func releasedBodyIsReused() {
        var ring = FLVBodyRing(slots: 2, reserve: 256)
        // Each body is dropped at the end of its statement, like a tag an output has written.
        let (address0, capacity0) = Self.storage(ring.build { $0.append(contentsOf: [1, 2, 3]) })
        _ = Self.storage(ring.build { $0.append(contentsOf: [4, 5]) })
        let again = ring.build { $0.append(contentsOf: [6, 7, 8, 9]) }
        #expect(again == [6, 7, 8, 9])
        #expect(Self.address(again) == address0)
        #expect(again.capacity == capacity0)
        #expect(capacity0 >= 256)
    }

    @Test("a body a tag still holds is not overwritten: the slot gets new storage and the tag keeps its bytes")
    func heldBodyIsNotReused() {
        var ring = FLVBodyRing(slots: 2, reserve: 256)
        let held = ring.build { $0.append(contentsOf: [1, 2, 3]) }
        _ = ring.build { $0.append(contentsOf: [4, 5]) }
        let next = ring.build { $0.append(contentsOf: [6, 7, 8, 9]) }
        #expect(held == [1, 2, 3])
        #expect(next == [6, 7, 8, 9])
        #expect(Self.address(next) != Self.address(held))
    }

    private static func storage(_ bytes: [UInt8]) -> (UInt, Int) { (address(bytes), bytes.capacity) }

    @Test("round and round with nothing held, each slot keeps one storage and its capacity")
    func steadyStateKeepsStorage() {
        var ring = FLVBodyRing(slots: 3, reserve: 64)
        var addresses: [UInt] = []
        var capacities: [Int] = []
        for round in 0..<4 {
            for slot in 0..<3 {
                let body = ring.build { $0.append(contentsOf: [UInt8](repeating: UInt8(slot), count: 10 + round)) }
                #expect(body.count == 10 + round && body.allSatisfy { $0 == UInt8(slot) })
                if round == 0 {
                    addresses.append(Self.address(body))
                    capacities.append(body.capacity)
                } else {
                    #expect(Self.address(body) == addresses[slot])
                    #expect(body.capacity == capacities[slot])
                }
            }
        }
    }

    @Test("a tag still queued keeps its bytes while the ring reuses every other slot many times over")
    func queuedTagIsNeverOverwritten() {
        var ring = FLVBodyRing(slots: 4, reserve: 16)
        let queued = FLVMuxer.audioTag(aac: [0xAA, 0xBB, 0xCC], timestampMs: 40)
        var kept: FLVTag?
        [UInt8](repeating: 0x55, count: 7).withUnsafeBytes { aac in
            kept = FLVMuxer.audioTag(aac: aac, timestampMs: 20, bodies: &ring)
        }
        for i in 0..<40 {
            [UInt8](repeating: UInt8(i), count: 9).withUnsafeBytes { aac in
                _ = FLVMuxer.audioTag(aac: aac, timestampMs: UInt32(i), bodies: &ring)
            }
        }
        #expect(kept?.body == [0xAF, 0x01] + [UInt8](repeating: 0x55, count: 7))
        #expect(queued.body == [0xAF, 0x01, 0xAA, 0xBB, 0xCC])
    }

    @Test("tags built in the ring are byte for byte the tags built from arrays")
    func ringTagsMatchArrayTags() {
        var ring = FLVBodyRing(slots: 2, reserve: 0)
        let aac: [UInt8] = [0x21, 0x10, 0x04, 0x60, 0x8C]
        let audio = aac.withUnsafeBytes { FLVMuxer.audioTag(aac: $0, timestampMs: 1234, bodies: &ring) }
        #expect(audio == FLVMuxer.audioTag(aac: aac, timestampMs: 1234))
        // An SPS, a PPS and an IDR slice, AVCC framed.
        let avcc: [UInt8] = [0, 0, 0, 2, 0x67, 0x42, 0, 0, 0, 2, 0x68, 0xCE, 0, 0, 0, 3, 0x65, 0x88, 0x84]
        let video = avcc.withUnsafeBytes {
            FLVMuxer.videoTag(avcc: $0, isKeyframe: true, timestampMs: 66, compositionTimeMs: -33, bodies: &ring)
        }
        #expect(video == FLVMuxer.videoTag(avcc: avcc, isKeyframe: true, timestampMs: 66, compositionTimeMs: -33))
        let sei = VoiceLevelsSEI.nal(
            payload: VoiceLevelsSEI.json(levels: [("alice", 67)], activeSpeaker: "alice", timeMs: 200))
        let withSEI = avcc.withUnsafeBytes {
            FLVMuxer.videoTag(
                avcc: $0, sei: sei, isKeyframe: false, timestampMs: 99, compositionTimeMs: 0, bodies: &ring)
        }
        #expect(
            withSEI
                == FLVMuxer.videoTag(
                    avcc: VoiceLevelsSEI.inserting(sei, into: avcc), isKeyframe: false,
                    timestampMs: 99, compositionTimeMs: 0))
    }

    @Test("voice-levels tags built in the ring are the array-built tags, and reuse the ring's storage once released")
    func voiceLevelsReuseTheirBody() {
        var ring = FLVBodyRing(slots: 1, reserve: 256)
        let levels = [(userId: "alice", level: 67), (userId: "bob", level: 3), (userId: "alice", level: 9)]
        let expected = FLVMuxer.voiceLevelsTag(levels: levels, activeSpeaker: "alice", timestampMs: 200)
        let (address, _) = Self.storage(
            FLVMuxer.voiceLevelsTag(
                levels: levels, activeSpeaker: "alice", timestampMs: 200,
                bodies: &ring
            ).body)
        let second = FLVMuxer.voiceLevelsTag(levels: levels, activeSpeaker: "alice", timestampMs: 200, bodies: &ring)
        #expect(second == expected)
        #expect(Self.address(second.body) == address)
    }
}
