import Testing
import RTP
@testable import Ingest

func rtp(
    _ seq: UInt16, ts: UInt32 = 0, marker: Bool = false, pt: UInt8 = 111, ssrc: UInt32 = 1001,
    payload: [UInt8] = [0xFC]
) -> RTPPacket {
    RTPPacket(marker: marker, payloadType: pt, sequenceNumber: seq, timestamp: ts, ssrc: ssrc, payload: payload)
}

extension [ReleasedPacket] {
    var seqs: [UInt16] { map(\.packet.sequenceNumber) }
    var losses: [Bool] { map(\.afterLoss) }
}

@Suite struct ReorderBufferTests {
    @Test func inOrderPacketsPassStraightThrough() {
        var b = ReorderBuffer(maxDelayMs: 40, capacity: 16)
        for (i, seq) in [UInt16(10), 11, 12].enumerated() {
            let out = b.insert(rtp(seq), nowMs: Int64(i) * 20)
            #expect(out == [ReleasedPacket(packet: rtp(seq), afterLoss: false)])
        }
        #expect(b.heldCount == 0)
        var expected = ReorderStats()
        expected.received = 3
        #expect(b.stats == expected)
    }

    @Test func reorderedPacketIsHeldThenReleasedInOrder() {
        var b = ReorderBuffer(maxDelayMs: 40, capacity: 16)
        #expect(b.insert(rtp(10), nowMs: 0).seqs == [10])
        #expect(b.insert(rtp(12), nowMs: 1).seqs == [])
        #expect(b.nextDeadlineMs == 41)
        let out = b.insert(rtp(11), nowMs: 2)
        #expect(out.seqs == [11, 12])
        #expect(out.losses == [false, false])
        #expect(b.stats.reordered == 1)
        #expect(b.stats.lost == 0)
        #expect(b.nextDeadlineMs == nil)
    }

    @Test func sequenceWrapsFrom65535To0() {
        var b = ReorderBuffer(maxDelayMs: 40, capacity: 16)
        #expect(b.insert(rtp(65534), nowMs: 0).seqs == [65534])
        #expect(b.insert(rtp(0), nowMs: 1).seqs == [])
        #expect(b.insert(rtp(65535), nowMs: 2).seqs == [65535, 0])
        #expect(b.insert(rtp(1), nowMs: 3).seqs == [1])
        #expect(b.stats.lost == 0)
        #expect(b.stats.late == 0)
    }

    @Test func duplicatesOfReleasedAndHeldPacketsAreDropped() {
        var b = ReorderBuffer(maxDelayMs: 40, capacity: 16)
        _ = b.insert(rtp(10), nowMs: 0)
        #expect(b.insert(rtp(10), nowMs: 1).seqs == [])
        #expect(b.insert(rtp(12), nowMs: 2).seqs == [])
        #expect(b.insert(rtp(12), nowMs: 3).seqs == [])
        #expect(b.insert(rtp(11), nowMs: 4).seqs == [11, 12])
        #expect(b.stats.duplicates == 2)
        #expect(b.stats.received == 5)
    }

    @Test func gapIsGivenUpAfterMaxDelayWithAfterLoss() {
        var b = ReorderBuffer(maxDelayMs: 40, capacity: 16)
        #expect(b.insert(rtp(1), nowMs: 0).seqs == [1])
        #expect(b.insert(rtp(4), nowMs: 5).seqs == [])
        #expect(b.insert(rtp(5), nowMs: 10).seqs == [])
        #expect(b.drain(nowMs: 44).isEmpty)
        let out = b.drain(nowMs: 45)
        #expect(out.seqs == [4, 5])
        #expect(out.losses == [true, false])
        #expect(b.stats.lost == 2)
        #expect(b.insert(rtp(6), nowMs: 46) == [ReleasedPacket(packet: rtp(6), afterLoss: false)])
    }

    @Test func packetArrivingAfterItsGapWasGivenUpIsLate() {
        var b = ReorderBuffer(maxDelayMs: 80, capacity: 16)
        _ = b.insert(rtp(10), nowMs: 0)
        _ = b.insert(rtp(12), nowMs: 0)
        #expect(b.drain(nowMs: 80).seqs == [12])
        #expect(b.insert(rtp(11), nowMs: 90).seqs == [])
        #expect(b.stats.late == 1)
        #expect(b.stats.duplicates == 0)
        #expect(b.stats.lost == 1)
    }

    @Test func insertAlsoReleasesExpiredGaps() {
        var b = ReorderBuffer(maxDelayMs: 40, capacity: 16)
        _ = b.insert(rtp(1), nowMs: 0)
        _ = b.insert(rtp(3), nowMs: 10)
        let out = b.insert(rtp(5), nowMs: 60)
        // 3 waited 50 ms (gap at 2 given up); 5 only just arrived, so the gap at 4 is still waited for.
        #expect(out.seqs == [3])
        #expect(out.losses == [true])
        #expect(b.nextDeadlineMs == 100)
    }

    @Test func capacityBoundGivesUpTheOldestGap() {
        var b = ReorderBuffer(maxDelayMs: 1000, capacity: 4)
        _ = b.insert(rtp(0), nowMs: 0)
        for seq in UInt16(2)...5 { #expect(b.insert(rtp(seq), nowMs: 1).isEmpty) }
        #expect(b.heldCount == 4)
        let out = b.insert(rtp(6), nowMs: 2)
        #expect(out.seqs == [2, 3, 4, 5, 6])
        #expect(out.losses == [true, false, false, false, false])
        #expect(b.stats.lost == 1)
        #expect(b.heldCount == 0)
    }

    @Test func capacityBoundHoldsWithManyGaps() {
        var b = ReorderBuffer(maxDelayMs: 1000, capacity: 8)
        _ = b.insert(rtp(0), nowMs: 0)
        var released = 1
        for seq in stride(from: UInt16(2), to: 200, by: 2) {
            released += b.insert(rtp(seq), nowMs: 1).count
            #expect(b.heldCount <= 8)
        }
        #expect(released + b.heldCount == 100)
        #expect(b.stats.lost == 99 - 8)
    }

    @Test func singleWildJumpIsDroppedButARestartIsFollowed() {
        var b = ReorderBuffer(maxDelayMs: 40, capacity: 16)
        _ = b.insert(rtp(100), nowMs: 0)
        _ = b.insert(rtp(101), nowMs: 1)
        #expect(b.insert(rtp(40000), nowMs: 2).isEmpty)  // one corrupt-looking packet: dropped
        #expect(b.insert(rtp(102), nowMs: 3).seqs == [102])
        #expect(b.stats.outOfRange == 1)
        #expect(b.insert(rtp(50000), nowMs: 4).isEmpty)
        let out = b.insert(rtp(50001), nowMs: 5)  // two in a row: the sender restarted
        #expect(out.seqs == [50001])
        #expect(out.losses == [true])
        #expect(b.insert(rtp(50002), nowMs: 6).losses == [false])
        #expect(b.stats.resyncs == 1)
        #expect(b.stats.outOfRange == 2)
        #expect(b.stats.lost == 0)
    }

    @Test func oldPacketsWithinMisorderWindowAreLateNotJumps() {
        var b = ReorderBuffer(maxDelayMs: 40, capacity: 16)
        _ = b.insert(rtp(5000), nowMs: 0)
        #expect(b.insert(rtp(4500), nowMs: 1).isEmpty)
        #expect(b.stats.late == 1)
        #expect(b.stats.outOfRange == 0)
    }
}
