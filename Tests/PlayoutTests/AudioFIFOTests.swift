import Testing
import Media
@testable import Playout

@Suite struct AudioFIFOTests {
    func block(_ value: Float, frames: Int = 960) -> [Float] { [Float](repeating: value, count: frames * 2) }

    @Test func prebuffersTwoBlocksBeforeTheFirstRead() {
        var fifo = AudioFIFO()
        var out = block(0)
        fifo.write(block(0.5), frames: 960)
        #expect(!fifo.read(into: &out, frames: 960))
        fifo.write(block(0.25), frames: 960)
        #expect(fifo.read(into: &out, frames: 960))
        #expect(out[0] == 0.5 && out[1919] == 0.5)
        #expect(fifo.read(into: &out, frames: 960))
        #expect(out[0] == 0.25)
    }

    /// The ring is 40 blocks: 100 blocks through it wrap it twice, with odd-sized writes straddling the end.
    @Test func samplesComeOutInOrderAcrossTheRingsWrap() {
        var fifo = AudioFIFO()
        var out = block(0)
        var next: Float = 0, expected: Float = 0
        for round in 0..<100 {
            let frames = round % 3 == 0 ? 700 : 1100
            fifo.write((0..<(frames * 2)).map { Float($0) + next }, frames: frames)
            next += Float(frames * 2)
            while fifo.bufferedFrames >= 3 * 960, fifo.read(into: &out, frames: 960) {
                #expect(out == (0..<1920).map { Float($0) + expected }, "round \(round)")
                expected += 1920
            }
        }
        #expect(expected > 1920 * 90)
        fifo.writeSilence(frames: 960)
        #expect(fifo.bufferedFrames >= 960)
    }

    @Test func anUnderrunRestartsThePrebuffer() {
        var fifo = AudioFIFO()
        var out = block(0)
        fifo.write(block(1), frames: 960)
        fifo.write(block(1), frames: 960)
        #expect(fifo.read(into: &out, frames: 960))
        #expect(fifo.read(into: &out, frames: 960))
        #expect(!fifo.read(into: &out, frames: 960))
        #expect(fifo.underruns == 1)
        fifo.write(block(1), frames: 960)
        #expect(!fifo.read(into: &out, frames: 960))
    }

    @Test func aBurstIsTrimmedBackToThePrebufferSoLatencyCannotCreep() {
        var fifo = AudioFIFO()
        for _ in 0..<11 { fifo.write(block(1), frames: 960) }
        #expect(fifo.bufferedFrames == 2 * 960)
        #expect(fifo.trimmedFrames == 9 * 960)
    }

    @Test func aStandingSurplusIsDroppedAfterASecondSoTheVoiceDoesNotLag() {
        var fifo = AudioFIFO()
        var out = block(0)
        // Five blocks arrive at once, then one per read: the fill stays at 5 blocks before each read.
        for _ in 0..<5 { fifo.write(block(1), frames: 960) }
        for _ in 0..<49 {
            #expect(fifo.read(into: &out, frames: 960))
            fifo.write(block(1), frames: 960)
        }
        #expect(fifo.bufferedFrames == 5 * 960 && fifo.trimmedFrames == 0)
        #expect(fifo.read(into: &out, frames: 960))  // the 50th read ends the window: 4 left, 2 kept
        #expect(fifo.bufferedFrames == 2 * 960)
        #expect(fifo.trimmedFrames == 2 * 960)
    }

    @Test func aFillThatTouchesThePrebufferIsLeftAlone() {
        var fifo = AudioFIFO()
        var out = block(0)
        for _ in 0..<3 { fifo.write(block(1), frames: 960) }
        for _ in 0..<100 {
            #expect(fifo.read(into: &out, frames: 960))
            fifo.write(block(1), frames: 960)
        }
        #expect(fifo.bufferedFrames == 3 * 960 && fifo.trimmedFrames == 0)
    }

    @Test func beforeThePrebufferFillsASyncDelayIsMadeAtOnce() {
        var fifo = AudioFIFO()
        var out = block(0)
        fifo.setSyncDelay(frames: 2 * 960)
        #expect(fifo.syncDelayFrames == 2 * 960 && fifo.pendingSyncChangeFrames == 0)
        for _ in 0..<3 { fifo.write(block(1), frames: 960) }
        #expect(!fifo.read(into: &out, frames: 960))  // waits for 4 blocks now
        fifo.write(block(1), frames: 960)
        #expect(fifo.read(into: &out, frames: 960))
    }

    @Test func aLongerSyncDelayIsSilencePutInFrontOfTheNextQuietRead() {
        var fifo = AudioFIFO()
        var out = block(0)
        fifo.write(block(1), frames: 960)
        fifo.write(block(1), frames: 960)
        #expect(fifo.read(into: &out, frames: 960))
        fifo.write(block(0.001), frames: 960)
        fifo.setSyncDelay(frames: 2 * 960)
        #expect(fifo.syncDelayFrames == 0 && fifo.pendingSyncChangeFrames == 2 * 960)
        #expect(fifo.read(into: &out, frames: 960) && out[0] == 1)  // a loud block: not here
        fifo.write(block(1), frames: 960)
        #expect(fifo.read(into: &out, frames: 960) && out == block(0))  // the quiet block comes after the silence
        #expect(fifo.syncDelayFrames == 2 * 960 && fifo.pendingSyncChangeFrames == 0)
        #expect(fifo.read(into: &out, frames: 960) && out[0] == 0)
        #expect(fifo.read(into: &out, frames: 960) && out[0] == 0.001)
        #expect(fifo.read(into: &out, frames: 960) && out[0] == 1)
    }

    @Test func aShorterSyncDelayCutsOnlyAStretchThatIsQuietAllAlong() {
        var fifo = AudioFIFO()
        var out = block(0)
        fifo.setSyncDelay(frames: 2 * 960)
        for _ in 0..<4 { fifo.write(block(1), frames: 960) }
        #expect(fifo.read(into: &out, frames: 960))
        for _ in 0..<3 { fifo.write(block(0.001), frames: 960) }  // buffered: 3 loud, 3 quiet
        fifo.setSyncDelay(frames: 0)
        for _ in 0..<3 { #expect(fifo.read(into: &out, frames: 960) && out[0] == 1) }
        #expect(fifo.pendingSyncChangeFrames == -2 * 960)  // two loud blocks ahead of the cut, then one
        #expect(fifo.read(into: &out, frames: 960) && out[0] == 0.001)  // 2 quiet blocks cut, the third read
        #expect(fifo.syncDelayFrames == 0 && fifo.bufferedFrames == 0)
        #expect(fifo.syncCutFrames == 2 * 960 && fifo.trimmedFrames == 0)  // a lip-sync cut is not a latency trim
    }

    @Test func withoutAPauseASyncDelayChangeWaitsAtMostTwoSeconds() {
        var fifo = AudioFIFO()
        var out = block(0)
        fifo.setSyncDelay(frames: 960)  // unprimed: at once
        for _ in 0..<3 { fifo.write(block(1), frames: 960) }
        #expect(fifo.read(into: &out, frames: 960))
        fifo.setSyncDelay(frames: 0)
        for _ in 0..<(AudioFIFO.syncChangeMaxWaitReads - 1) {
            fifo.write(block(1), frames: 960)
            #expect(fifo.read(into: &out, frames: 960))
        }
        #expect(fifo.pendingSyncChangeFrames == -960)
        fifo.write(block(1), frames: 960)
        _ = fifo.read(into: &out, frames: 960)
        #expect(fifo.pendingSyncChangeFrames == 0 && fifo.syncDelayFrames == 0)
    }

    /// A mono room decodes voices to mono: the FIFO writes each sample to both channels, also where the
    /// write wraps around the end of the ring.
    @Test func monoWritesFillBothChannelsAcrossTheRingsWrap() {
        var fifo = AudioFIFO()
        var out = block(0)
        var next: Float = 0, expected: Float = 0
        for round in 0..<100 {
            let frames = round % 3 == 0 ? 700 : 1100
            fifo.write((0..<frames).map { Float($0) + next }, frames: frames, channels: 1)
            next += Float(frames)
            while fifo.bufferedFrames >= 3 * 960, fifo.read(into: &out, frames: 960) {
                #expect(out == (0..<1920).map { Float($0 / 2) + expected }, "round \(round)")
                expected += 960
            }
        }
        #expect(expected > 960 * 90)
    }

    @Test func aMonoWriteNeverReadsPastTheSamplesItWasGiven() {
        var fifo = AudioFIFO()
        var out = block(0)
        fifo.write([Float](repeating: 0.5, count: 960), frames: 1920, channels: 1)  // claims more than it has
        #expect(fifo.bufferedFrames == 960)
        fifo.write([Float](repeating: 0.25, count: 960), frames: 960, channels: 1)
        #expect(fifo.read(into: &out, frames: 960))
        #expect(out.allSatisfy { $0 == 0.5 })
    }

    /// After a stall the mixer makes up for the ticks it skipped; the senders stalled too, so some of that audio
    /// is still on its way. A block missing then is owed, not an underrun: the FIFO stays primed, and the owed
    /// audio is dropped when it comes, so the voice keeps its delay instead of gaining a prebuffer's worth.
    @Test func aBlockMissingWhileCatchingUpIsOwedAndTheLateAudioIsDropped() {
        var fifo = AudioFIFO()
        var out = block(0)
        fifo.write(block(1), frames: 960)
        fifo.write(block(2), frames: 960)
        #expect(fifo.read(into: &out, frames: 960) && out[0] == 1)
        #expect(fifo.read(into: &out, frames: 960, catchingUp: true) && out[0] == 2)
        #expect(!fifo.read(into: &out, frames: 960, catchingUp: true))  // block 3's time: not here yet
        #expect(fifo.underruns == 0 && fifo.owedFrames == 960)
        fifo.write(block(3), frames: 960)  // late: its time was played as silence
        fifo.write(block(4), frames: 960)
        #expect(fifo.owedFrames == 0 && fifo.trimmedFrames == 960)
        #expect(fifo.read(into: &out, frames: 960) && out[0] == 4)  // still primed: no prebuffer to wait for
    }

    @Test func anUnderrunForgetsWhatWasOwed() {
        var fifo = AudioFIFO()
        var out = block(0)
        for v in [1, 2] as [Float] { fifo.write(block(v), frames: 960) }
        #expect(fifo.read(into: &out, frames: 960) && fifo.read(into: &out, frames: 960, catchingUp: true))
        #expect(!fifo.read(into: &out, frames: 960, catchingUp: true) && fifo.owedFrames == 960)
        #expect(!fifo.read(into: &out, frames: 960))  // an ordinary read finds it dry: the voice went quiet
        #expect(fifo.underruns == 1 && fifo.owedFrames == 0)
        for v in [5, 6] as [Float] { fifo.write(block(v), frames: 960) }
        #expect(fifo.read(into: &out, frames: 960) && out[0] == 5)  // what it says next is not cut
    }
}
