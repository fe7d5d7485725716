import Testing
import Publishing
@testable import Rooms

@Suite struct TagInterleaverTests {
    func audio(_ ts: UInt32) -> FLVTag { FLVMuxer.audioTag(aac: [1], timestampMs: ts) }
    func video(_ ts: UInt32) -> FLVTag { FLVMuxer.videoTag(avcc: [0, 0, 0, 1, 0x65], isKeyframe: true, timestampMs: ts, compositionTimeMs: 0) }

    @Test func releasesInTimestampOrderAcrossKinds() {
        var i = TagInterleaver(hasVideo: true)
        var out: [FLVTag] = []
        i.push(video(0), into: &out)
        i.push(video(33), into: &out)
        #expect(out.isEmpty)
        i.push(audio(0), into: &out)
        i.push(audio(21), into: &out)
        i.push(audio(42), into: &out)
        #expect(out.map(\.timestampMs) == [0, 0, 21, 33])
        #expect(out.map(\.kind) == [.audio, .video, .audio, .video])
    }

    /// Found end to end: a data tag stamped after the AAC tag pushed before it made `newest − first` underflow
    /// and trap. An out-of-order lane must only delay tags, never crash the room.
    @Test func aLaneOutOfOrderDoesNotTrapAndNeverGoesBackwards() {
        var i = TagInterleaver(hasVideo: true, maxWaitMs: 200)
        var out: [FLVTag] = []
        i.push(audio(1216), into: &out)
        i.push(audio(1200), into: &out)
        i.push(video(1000), into: &out)
        i.push(video(1500), into: &out)
        i.push(video(1700), into: &out)
        #expect(out.map(\.timestampMs) == [1000, 1216, 1216])
    }

    @Test func aKindThatStopsDoesNotHoldTheOtherBackPastTheWait() {
        var i = TagInterleaver(hasVideo: true, maxWaitMs: 200)
        var out: [FLVTag] = []
        for ts in stride(from: UInt32(0), through: 300, by: 100) { i.push(audio(ts), into: &out) }
        #expect(out.map(\.timestampMs) == [0])
        i.push(audio(400), into: &out)
        #expect(out.map(\.timestampMs) == [0, 100])
    }

    @Test func lowLatencySendsEachKindAtOnceMonotonicPerKind() {
        var i = TagInterleaver(hasVideo: true, lowLatency: true)
        var out: [FLVTag] = []
        i.push(video(100), into: &out)
        #expect(out.map(\.timestampMs) == [100])
        i.push(audio(0), into: &out)
        i.push(audio(21), into: &out)
        i.push(video(133), into: &out)
        i.push(audio(15), into: &out)   // late within its own lane: takes that lane's last time
        i.push(video(120), into: &out)
        #expect(out.map(\.timestampMs) == [100, 0, 21, 133, 21, 133])
        #expect(out.map(\.kind) == [.video, .audio, .audio, .video, .audio, .video])
        var rest: [FLVTag] = []
        i.flush(into: &rest)
        #expect(rest.isEmpty)
    }

    @Test func lateTagsAreClampedSoTimestampsNeverGoBack() {
        var i = TagInterleaver(hasVideo: false)
        var out: [FLVTag] = []
        i.push(audio(100), into: &out)
        i.push(audio(90), into: &out)
        #expect(out.map(\.timestampMs) == [100, 100])
    }

    @Test func audioOnlyPassesStraightThrough() {
        var i = TagInterleaver(hasVideo: false)
        var out: [FLVTag] = []
        i.push(audio(0), into: &out)
        #expect(out.count == 1)
    }

    @Test func flushReleasesEverythingInOrder() {
        var i = TagInterleaver(hasVideo: true)
        var out: [FLVTag] = []
        i.push(video(40), into: &out)
        i.push(video(80), into: &out)
        i.flush(into: &out)
        #expect(out.map(\.timestampMs) == [40, 80])
    }
}

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
        fifo.write(block(1), frames: 960); fifo.write(block(1), frames: 960)
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

    @Test func aSyncDelayIsBuiltByPrebufferingAgainAndGivenBackByDropping() {
        var fifo = AudioFIFO()
        var out = block(0)
        for _ in 0..<2 { fifo.write(block(1), frames: 960) }
        #expect(fifo.read(into: &out, frames: 960))
        fifo.setSyncDelay(frames: 2 * 960)
        #expect(!fifo.read(into: &out, frames: 960))  // waits for 4 blocks now
        for _ in 0..<3 { fifo.write(block(1), frames: 960) }
        #expect(fifo.bufferedFrames == 4 * 960)
        #expect(fifo.read(into: &out, frames: 960))
        fifo.setSyncDelay(frames: 960)
        #expect(fifo.bufferedFrames == 2 * 960 && fifo.syncDelayFrames == 960)
    }
}
