import Testing
import RTP
@testable import Ingest

/// The packet path must not allocate per packet: the jitter buffer copies packets into recycled slots
/// and frames are handed over by callback. These pin storage identity and the pool's bound.
@Suite struct InboundStreamReuseTests {
    static func address(_ bytes: [UInt8]) -> UInt? {
        bytes.withUnsafeBufferPointer { $0.baseAddress.map { UInt(bitPattern: $0) } }
    }

    @Test func inOrderOpusPacketsReuseOneSlotForEveryFrame() {
        let s = InboundStream(
            ssrc: 1001, payloadType: 111, clockRate: 48000, depacketizer: OpusDepacketizer(),
            maxDelayMs: 40)
        var addresses: [UInt?] = []
        var timestamps: [UInt32] = []
        // One kept packet, rewritten for each datagram, as the router does.
        var packet = rtp(0, ts: 0, payload: [0x78, 0x01, 0x02, 0x03])
        for i in 0..<50 {
            packet.sequenceNumber = UInt16(i)
            packet.timestamp = UInt32(960 * i)
            packet.payload[3] = UInt8(i)
            s.receive(packet, bytes: 16, nowMs: Int64(20 * i)) { frame in
                addresses.append(Self.address(frame.data))
                timestamps.append(frame.rtpTimestamp)
                #expect(frame.data == [0x78, 0x01, 0x02, UInt8(i)])
            }
        }
        #expect(timestamps == (0..<50).map { UInt32(960 * $0) })
        #expect(Set(addresses).count == 1)
        #expect(addresses.first != Self.address(packet.payload))
        #expect(s.buffer.reorder.spareCount == 1)
    }

    @Test func reorderedPacketsComeOutInOrderAndThePoolStaysBounded() {
        let s = InboundStream(
            ssrc: 1001, payloadType: 111, clockRate: 48000, depacketizer: OpusDepacketizer(),
            maxDelayMs: 40, capacity: 8)
        var out: [UInt32] = []
        // Pairs swapped: 0, 2 1, 4 3, ... 18 17, 19; then a burst of 20 held behind a gap that never fills.
        let order = [0] + (1..<10).flatMap { [2 * $0, 2 * $0 - 1] } + [19]
        for (i, seq) in order.enumerated() {
            s.receive(rtp(UInt16(seq), ts: UInt32(960 * seq)), bytes: 13, nowMs: Int64(10 * i)) {
                out.append($0.rtpTimestamp / 960)
            }
        }
        #expect(out == (0..<20).map { UInt32($0) })
        out.removeAll()
        for seq in 21..<41 {
            s.receive(rtp(UInt16(seq), ts: UInt32(960 * seq)), bytes: 13, nowMs: 400) {
                out.append($0.rtpTimestamp / 960)
            }
        }
        s.drain(nowMs: 1000) { out.append($0.rtpTimestamp / 960) }
        #expect(out == (21..<41).map { UInt32($0) })
        #expect(s.stats.lost == 1)
        #expect(s.buffer.reorder.spareCount <= 8 + 2)
        #expect(s.buffer.heldCount == 0)
    }
}
