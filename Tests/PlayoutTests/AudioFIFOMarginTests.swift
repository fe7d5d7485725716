import Testing
import Media
@testable import Playout

/// The FIFO's measured margin (`VoiceMargin`): how long before each 20 ms read its last sample had arrived, the
/// smallest of a second of reads. Times are injected: a sender whose block k arrives at `arrival(k)` ms, a mixer
/// reading at every multiple of 20 ms.
@Suite struct AudioFIFOMarginTests {
    struct Sender {
        var fifo = AudioFIFO()
        var next = 0
        var out = [Float](repeating: 0, count: 1920)
        var failedReads = 0
        let arrival: (Int) -> Int64

        init(arrival: @escaping (Int) -> Int64) { self.arrival = arrival }

        /// Runs the mixer's reads for ticks `ticks` (20 ms each), delivering every block that arrived before each.
        mutating func run(_ ticks: Range<Int>) {
            for tick in ticks {
                let now = Int64(tick * 20)
                while arrival(next) < now {
                    fifo.write([Float](repeating: 0.001, count: 1920), frames: 960, arrivedMs: arrival(next))
                    next += 1
                }
                if !fifo.read(into: &out, frames: 960, nowMs: now) { failedReads += 1 }
            }
        }
    }

    /// Block k at 20k + 3 ms: primed on block 1 (23 ms), the first read (40 ms) takes block 0, 37 ms after it came,
    /// and so on for every block.
    @Test func aSteadySenderIsReadABlockAndItsPhaseAfterItCame() {
        var s = Sender { Int64($0 * 20 + 3) }
        s.run(0..<51)
        #expect(s.fifo.margin.lastWindowMinMs == nil)  // 49 reads: no window closed yet
        s.run(51..<52)
        #expect(s.fifo.margin.lastWindowMinMs == 37)
        #expect(s.failedReads == 2)
    }

    /// Blocks 0 and 1 come together at 18 and 19 ms (block 1 early), then block k at 20k + 18: primed at once,
    /// the FIFO reads each block 2 ms after it came, and a packet 3 ms late would be a gap.
    @Test func aBurstOfFirstPacketsLeavesNoMargin() {
        var s = Sender { k in k == 1 ? 19 : Int64(k * 20 + 18) }
        s.run(0..<51)
        #expect(s.fifo.margin.lastWindowMinMs == 2)
    }

    /// One packet 15 ms late: the window's smallest slack is what it had left.
    @Test func theWindowKeepsItsLatestPacket() {
        var s = Sender { k in Int64(k * 20 + 3) + (k == 20 ? 15 : 0) }
        s.run(0..<52)
        #expect(s.fifo.margin.lastWindowMinMs == 22)
        s.run(52..<102)
        #expect(s.fifo.margin.lastWindowMinMs == 37)
        #expect(s.fifo.underruns == 0)
    }

    /// Lip-sync's silence is read like audio but was not sent: reads of it measure nothing, and the voice held
    /// 100 ms behind is read 137 ms after it came.
    @Test func silencePutInForLipSyncIsNotTimedAndTheHoldCounts() {
        var s = Sender { Int64($0 * 20 + 3) }
        s.run(0..<52)
        s.fifo.setSyncDelay(frames: 4800)
        s.run(52..<152)
        #expect(s.fifo.syncDelayFrames == 4800 && s.fifo.margin.lastWindowMinMs == 137)
    }

    @Test func untimedWritesAndReadsMeasureNothing() {
        var fifo = AudioFIFO()
        var out = [Float](repeating: 0, count: 1920)
        for _ in 0..<120 {
            fifo.write([Float](repeating: 0.5, count: 1920), frames: 960)
            _ = fifo.read(into: &out, frames: 960, nowMs: 0)
        }
        #expect(fifo.margin.lastWindowMinMs == nil)
    }
}
