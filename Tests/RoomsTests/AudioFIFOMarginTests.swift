import Testing
import Media
@testable import Rooms

/// The FIFO's margin (`VoiceMargin`): how early packets reach it before the mixer's 20 ms reads, kept within
/// [10, 50) ms by whole blocks put in or cut at pauses, each change landing it in [20, 40). Times are injected: a sender whose block k arrives at
/// `arrival(k)` ms, a mixer reading at every multiple of 20 ms.
@Suite struct AudioFIFOMarginTests {
    struct Sender {
        var fifo = AudioFIFO()
        var next = 0
        var out = [Float](repeating: 0, count: 1920)
        var failedReads = 0
        let arrival: (Int) -> Int64
        var level: (Int) -> Float = { _ in 0.001 }  // quiet (under −40 dBFS) unless a test says otherwise

        init(arrival: @escaping (Int) -> Int64) { self.arrival = arrival }

        /// Runs the mixer's reads for ticks `ticks` (20 ms each), delivering every block that arrived before each.
        mutating func run(_ ticks: Range<Int>) {
            for tick in ticks {
                let now = Int64(tick * 20)
                while arrival(next) < now {
                    fifo.write([Float](repeating: level(next), count: 1920), frames: 960, arrivedMs: arrival(next))
                    next += 1
                }
                if !fifo.read(into: &out, frames: 960, nowMs: now) { failedReads += 1 }
            }
        }
    }

    /// Block k comes at 20k + 43 ms, until the path gets 40 ms shorter at block 59: blocks 59-61 come at once (a
    /// queue drained), later ones at 20k + 3. Each block had been read 37 ms after it came; from then on 77 ms, which
    /// would delay this voice 40 ms for good. Once the last 5 windows are all over 50 ms, 2 blocks are cut at a pause.
    @Test func aSurplusLeftByADrainedQueueIsCutOnceItHasLastedTheHistory() {
        var s = Sender { k in k < 59 ? Int64(k * 20 + 43) : max(Int64(k * 20 + 3), 1223) }
        s.run(0..<54)  // 4 unprimed ticks, then the first window of 50 reads
        #expect(s.fifo.margin.lastWindowMinMs == 37)
        s.run(54..<354)  // windows 2-7: the one with the drain still has a read at 37 ms, the next five 77 ms
        #expect(s.fifo.margin.lastWindowMinMs == 77)
        #expect(s.fifo.pendingMarginFrames == -2 * 960 && s.fifo.marginCutFrames == 0)
        s.run(354..<355)  // cut at the next (quiet) read
        #expect(s.fifo.pendingMarginFrames == 0 && s.fifo.marginCutFrames == 2 * 960)
        s.run(355..<404)
        #expect(s.fifo.margin.lastWindowMinMs == 37)
        #expect(s.fifo.marginAddedFrames == 0 && s.fifo.underruns == 0 && s.fifo.trimmedFrames == 0)
        #expect(s.failedReads == 4)
    }

    /// A slack of 37 ms, inside the band, is left alone.
    @Test func aSlackInsideTheBandIsLeftAlone() {
        var s = Sender { Int64($0 * 20 + 3) }
        s.run(0..<400)
        #expect(s.fifo.margin.lastWindowMinMs == 37)
        #expect(s.fifo.marginCutFrames == 0 && s.fifo.marginAddedFrames == 0 && s.fifo.pendingMarginFrames == 0)
    }

    /// Blocks 0 and 1 come together at 18 and 19 ms (a burst: block 1 early), then block k at 20k + 18. Primed at
    /// once, the FIFO reads each block 2 ms after it came: one late packet would be a gap. A block of silence put
    /// in at a pause restores 22 ms, and a packet 15 ms late then plays on time.
    @Test func aMarginSpentByABurstIsPutBackAtAPause() {
        var s = Sender { k in k == 1 ? 19 : Int64(k * 20 + 18) + (k == 150 ? 15 : 0) }
        s.run(0..<52)
        #expect(s.fifo.margin.lastWindowMinMs == 2)
        s.run(52..<53)
        #expect(s.fifo.marginAddedFrames == 960)
        s.run(53..<152)
        #expect(s.fifo.margin.lastWindowMinMs == 22)
        s.run(152..<202)
        #expect(s.fifo.margin.lastWindowMinMs == 22 - 15)  // the window of the late packet
        #expect(s.fifo.underruns == 0 && s.fifo.marginCutFrames == 0)
    }

    /// The same spent margin without the fix: the late packet is a gap. (What the test above guards against.)
    @Test func withoutTimesTheFIFOKeepsTheMarginItWasPrimedWith() {
        var fifo = AudioFIFO()
        var out = [Float](repeating: 0, count: 1920)
        let quiet = [Float](repeating: 0.001, count: 1920)
        fifo.write(quiet, frames: 960); fifo.write(quiet, frames: 960)
        for _ in 0..<200 {
            #expect(fifo.read(into: &out, frames: 960))
            fifo.write(quiet, frames: 960)
        }
        #expect(fifo.bufferedFrames == 2 * 960 && fifo.marginCutFrames == 0 && fifo.marginAddedFrames == 0)
    }

    @Test func aMarginChangeWaitsForAPause() {
        var s = Sender { k in k == 1 ? 19 : Int64(k * 20 + 18) }
        s.level = { $0 < 120 ? 0.5 : 0.001 }  // talking for 2.4 s, then a pause
        s.run(0..<110)
        #expect(s.fifo.pendingMarginFrames == 960 && s.fifo.marginAddedFrames == 0)
        s.run(110..<125)
        #expect(s.fifo.pendingMarginFrames == 0 && s.fifo.marginAddedFrames == 960)
        #expect(s.fifo.underruns == 0)
    }

    /// Lip-sync holds this voice back 100 ms: packets are read 137 ms after they came, but that delay is not
    /// margin to cut.
    @Test func aLipSyncDelayIsNotCountedAsMargin() {
        var s = Sender { Int64($0 * 20 + 3) }
        s.fifo.setSyncDelay(frames: 4800)  // unprimed: made at once, the prebuffer waits for 2 blocks + 100 ms
        s.run(0..<400)
        #expect(s.fifo.syncDelayFrames == 4800 && s.fifo.margin.lastWindowMinMs == 37)
        #expect(s.fifo.marginCutFrames == 0 && s.fifo.underruns == 0)
    }

    @Test func anUnderrunWhileTalkingRaisesTheTargetAndAQuietSecondLowersItAgain() {
        var margin = VoiceMargin()
        margin.underran()
        margin.underran()
        #expect(margin.targetMs == 30)
        margin.wrote(frames: 960, arrivedMs: 0)
        margin.consumed(frames: 960)
        #expect(margin.read(nowMs: 15, heldMs: 0) == nil)
        for _ in 1..<VoiceMargin.windowReads - 1 { _ = margin.read(nowMs: 15, heldMs: 0) }
        #expect(margin.read(nowMs: 15, heldMs: 0) == 40)  // slack 15 under 30 (the window had underruns): to 55
        #expect(margin.targetMs == 30)
        for _ in 0..<VoiceMargin.windowReads { _ = margin.read(nowMs: 15, heldMs: 0) }
        #expect(margin.targetMs == 29)
    }

    /// A DTX talker's pause drains the FIFO: that is the end of a talk spurt, not a late packet.
    @Test func anUnderrunAfterDTXSilenceLeavesTheTargetAlone() {
        var fifo = AudioFIFO()
        var out = [Float](repeating: 0, count: 1920)
        fifo.write([Float](repeating: 0.5, count: 1920), frames: 960, arrivedMs: 0)
        fifo.writeSilence(frames: 960, arrivedMs: 1)
        #expect(fifo.read(into: &out, frames: 960, nowMs: 20) && fifo.read(into: &out, frames: 960, nowMs: 40))
        #expect(!fifo.read(into: &out, frames: 960, nowMs: 60))
        #expect(fifo.underruns == 1 && fifo.margin.targetMs == VoiceMargin.targetMs)
        fifo.write([Float](repeating: 0.5, count: 1920), frames: 960, arrivedMs: 500)
        fifo.write([Float](repeating: 0.5, count: 1920), frames: 960, arrivedMs: 510)
        #expect(fifo.read(into: &out, frames: 960, nowMs: 520) && fifo.read(into: &out, frames: 960, nowMs: 540))
        #expect(!fifo.read(into: &out, frames: 960, nowMs: 560))  // talking, and the next packet is late
        #expect(fifo.margin.targetMs == VoiceMargin.targetMs + VoiceMargin.underrunStepMs)
    }

    /// Whole blocks only (a block moves every packet by exactly one 20 ms read, less moves none), landing in [20, 40).
    @Test func changesAreWholeBlocksThatLandTheSlackInTheMiddleOfTheBand() {
        func decision(slack: Int) -> Int? {
            var margin = VoiceMargin()
            var last: Int?
            for i in 0..<VoiceMargin.windowReads {
                margin.wrote(frames: 960, arrivedMs: Int64(i * 20))
                margin.consumed(frames: 960)
                last = margin.read(nowMs: Int64(i * 20 + slack), heldMs: 0)
            }
            return last
        }
        #expect(decision(slack: -2) == 40)
        #expect(decision(slack: 2) == 20)
        #expect(decision(slack: 9) == 20)
        #expect(decision(slack: 10) == 0)
        #expect(decision(slack: 49) == 0)
        #expect(decision(slack: 50) == -20)
        #expect(decision(slack: 59) == -20)
        #expect(decision(slack: 60) == -40)
    }
}
