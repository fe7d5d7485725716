import Testing
import RTP
@testable import Playout

@Suite struct PendingAudioFramesTests {
    func frame(_ ts: UInt32, bytes: Int = 3) -> EncodedFrame {
        EncodedFrame(data: [UInt8](repeating: UInt8(ts & 0xFF), count: bytes), rtpTimestamp: ts, isKeyframe: true)
    }

    @Test func framesComeOutOldestFirstAcrossTheRingsWrapWithTheirReleaseTimes() {
        var pending = PendingAudioFrames(capacity: 4)
        var out: [(UInt32, Int64, [UInt8])] = []
        for round in 0..<5 {
            for k in 0..<3 {
                let ts = UInt32(round * 3 + k) * 960
                pending.push(frame(ts), releasedMs: Int64(ts / 48))
            }
            while let entry = pending.popFirst() { out.append((entry.rtpTimestamp, entry.releasedMs, entry.data)) }
        }
        #expect(out.map(\.0) == (0..<15).map { UInt32($0) * 960 })
        #expect(out.map(\.1) == (0..<15).map { Int64($0) * 20 })
        #expect(out.allSatisfy { $0.2 == [UInt8](repeating: UInt8($0.0 & 0xFF), count: 3) })
    }

    @Test func aFullRingDropsItsOldestRatherThanGrowing() {
        var pending = PendingAudioFrames(capacity: 2)
        for ts: UInt32 in [1, 2, 3] { pending.push(frame(ts), releasedMs: 0) }
        #expect(pending.count == 2 && pending.isFull)
        #expect(pending.popFirst()?.rtpTimestamp == 2)
        #expect(pending.popFirst()?.rtpTimestamp == 3)
        #expect(pending.popFirst() == nil && pending.isEmpty)
    }

    @Test func aSlotTakesAFrameLargerThanItsReserveAndThenAShorterOne() {
        var pending = PendingAudioFrames(capacity: 1, reserveBytes: 4)
        pending.push(frame(7, bytes: 1275), releasedMs: 0)
        #expect(pending.popFirst()?.data.count == 1275)
        pending.push(frame(8, bytes: 2), releasedMs: 0)
        #expect(pending.popFirst()?.data == [8, 8])
    }
}
