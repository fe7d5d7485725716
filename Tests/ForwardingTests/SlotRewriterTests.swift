import Forwarding
import RTP
import Testing

/// What a receiver's slot sends when it switches from one sender to another: one stream, numbers without a gap,
/// starting at a keyframe, picture ids continuous.
@Suite struct SlotRewriterTests {
    func numbers(_ out: (sequence: UInt16, timestamp: UInt32)?) -> [UInt32]? {
        out.map { [UInt32($0.sequence), $0.timestamp] }
    }

    struct Sent: Equatable {
        var sequence: UInt16
        var timestamp: UInt32
        var payload: [UInt8]
    }

    /// Forwards `packets` of `source` through the slot at 33 ms a frame from `startMs`, VP8 munged.
    func forward(
        _ packets: [SentPacket], source: UInt32, through slot: inout SlotRewriter, munger: inout VP8Munger,
        startMs: Int64
    ) -> [Sent] {
        var sent: [Sent] = []
        for p in packets {
            let key = ForwardedKeyframe.vp8(p.payload[...])
            let wasStarted = slot.started
            let nowMs = startMs + Int64(p.timestamp &- packets[0].timestamp) / 90
            guard
                let out = slot.rewrite(
                    source: source, sequence: p.sequence, timestamp: p.timestamp, startsKeyframe: key, nowMs: nowMs)
            else { continue }
            if !wasStarted { munger.restart(at: p.payload[...]) }
            var bytes = [UInt8](repeating: 0, count: 12) + p.payload
            munger.rewrite(&bytes, payloadAt: 12)
            sent.append(Sent(sequence: out.sequence, timestamp: out.timestamp, payload: Array(bytes[12...])))
        }
        return sent
    }

    @Test func aSwitchContinuesTheNumbersAndStartsAtTheNewSendersKeyframe() throws {
        // Ann: a keyframe every 10 frames; Bob: his keyframe at frame 0 and 10, numbered far from Ann's.
        let ann = try Fixtures.vp8(
            frames: 20, keyEvery: 10, luma: 40, firstSequence: 65_500, firstTimestamp: 1_000,
            firstPictureID: 32_760)
        let bob = try Fixtures.vp8(
            frames: 20, keyEvery: 10, luma: 200, firstSequence: 7, firstTimestamp: 4_000_000_000,
            firstPictureID: 5)
        var slot = SlotRewriter(initialSequence: 1000, initialTimestamp: 90_000)
        var munger = VP8Munger()
        slot.show(0xA)
        let first = forward(ann, source: 0xA, through: &slot, munger: &munger, startMs: 0)
        // Bob is shown from his packets of frame 5 on: nothing until his keyframe at frame 10.
        slot.show(0xB)
        let fromFrame5 = Array(bob.drop { $0.timestamp &- 4_000_000_000 < 5 * 3000 })
        let second = forward(fromFrame5, source: 0xB, through: &slot, munger: &munger, startMs: 1_000)

        #expect(first.count == ann.count)
        #expect(first.first?.sequence == 1000)
        #expect(first.first?.timestamp == 90_000)
        let all = first + second
        for (a, b) in zip(all, all.dropFirst()) { #expect(b.sequence == a.sequence &+ 1) }
        // Bob's first packet sent is his keyframe's first: key, start of frame.
        let bobFirst = try #require(second.first)
        #expect(ForwardedKeyframe.vp8(bobFirst.payload[...]))
        #expect(
            bobFirst.payload.suffix(from: 4)
                == bob.first { $0.timestamp == 4_000_000_000 &+ 30_000 }!.payload.suffix(from: 4))
        // Its timestamp follows Ann's last by the wall-clock gap (frame 19 at 633 ms, Bob's keyframe at 1 166 ms).
        let annLast = try #require(first.last)
        #expect(bobFirst.timestamp == annLast.timestamp &+ UInt32((1_166 - 633) * 90))
        // Picture ids run on: Ann's 20 (wrapping at 32 767), then Bob's.
        var pictures: [UInt16] = []
        for s in all where Fixtures.startsFrame(s.payload) { pictures.append(Fixtures.pictureID(s.payload)) }
        #expect(pictures.count == 30)
        for (a, b) in zip(pictures, pictures.dropFirst()) { #expect(b == (a + 1) & 0x7FFF) }
        #expect(slot.segments == 2)
    }

    @Test func aStartingSlotDropsDeltaFramesUntilAKeyframe() throws {
        let packets = try Fixtures.vp8(
            frames: 12, keyEvery: 8, firstSequence: 100, firstTimestamp: 0, firstPictureID: 0)
        var slot = SlotRewriter(initialSequence: 9, initialTimestamp: 0)
        var munger = VP8Munger()
        slot.show(1)
        let sent = forward(
            Array(packets.drop { $0.timestamp < 3000 }), source: 1, through: &slot, munger: &munger, startMs: 0)
        let keyframe8 = try #require(packets.firstIndex { $0.timestamp == 8 * 3000 })
        #expect(sent.count == packets.count - keyframe8)
        #expect(sent.first?.sequence == 9)
    }

    @Test func packetsOfAnotherSourceOrFromBeforeTheSegmentAreDropped() {
        var slot = SlotRewriter(initialSequence: 50, initialTimestamp: 0)
        slot.show(1)
        let other = numbers(slot.rewrite(source: 2, sequence: 10, timestamp: 0, startsKeyframe: true, nowMs: 0))
        #expect(other == nil)
        let r1 = numbers(slot.rewrite(source: 1, sequence: 10, timestamp: 0, startsKeyframe: true, nowMs: 0))
        #expect(r1 == [50, 0])
        let early = numbers(slot.rewrite(source: 1, sequence: 9, timestamp: 0, startsKeyframe: false, nowMs: 0))
        #expect(early == nil)
        // Late but of the segment: same mapping.
        let r2 = numbers(slot.rewrite(source: 1, sequence: 12, timestamp: 3000, startsKeyframe: false, nowMs: 33))
        #expect(r2 == [52, 3000])
        let r3 = numbers(slot.rewrite(source: 1, sequence: 11, timestamp: 0, startsKeyframe: false, nowMs: 34))
        #expect(r3 == [51, 0])
    }

    @Test func aNackedNumberMapsBackToTheSourcesNumberOnlyWithinTheSegment() {
        var slot = SlotRewriter(initialSequence: 65_535, initialTimestamp: 0)
        slot.show(1)
        _ = slot.rewrite(source: 1, sequence: 300, timestamp: 0, startsKeyframe: true, nowMs: 0)
        for s in UInt16(301)...305 {
            _ = slot.rewrite(source: 1, sequence: s, timestamp: 0, startsKeyframe: false, nowMs: 0)
        }
        #expect(slot.original(ofSequence: 65_535) == 300)
        #expect(slot.original(ofSequence: 3) == 304)
        #expect(slot.original(ofSequence: 5) == nil)  // not sent yet
        #expect(slot.original(ofSequence: 65_534) == nil)  // before the segment
        slot.show(2)
        #expect(slot.original(ofSequence: 3) == nil)
    }

    @Test func aRestartAfterAPauseWaitsForAKeyframeAndLeavesNoGap() {
        var slot = SlotRewriter(initialSequence: 0, initialTimestamp: 0)
        slot.show(1)
        _ = slot.rewrite(source: 1, sequence: 10, timestamp: 900, startsKeyframe: true, nowMs: 0)
        slot.restart()
        let delta = numbers(slot.rewrite(source: 1, sequence: 11, timestamp: 3900, startsKeyframe: false, nowMs: 33))
        #expect(delta == nil)
        let out = slot.rewrite(source: 1, sequence: 40, timestamp: 90_900, startsKeyframe: true, nowMs: 1000)
        #expect(numbers(out) == [1, 90_000])
    }
}

/// What starts a keyframe, read from real encoder output.
@Suite struct ForwardedKeyframeTests {
    @Test func vp8KeyframesAreTheFirstPacketOfAKeyFrameOnly() throws {
        let packets = try Fixtures.vp8(frames: 6, keyEvery: 4, firstSequence: 0, firstTimestamp: 0, firstPictureID: 0)
        let starts = packets.filter { ForwardedKeyframe.vp8($0.payload[...]) }.map(\.timestamp)
        #expect(starts == [0, 4 * 3000])
    }

    @Test func h264KeyframesStartAtTheParameterSets() throws {
        let packets = try Fixtures.h264(frames: 6, keyEvery: 3, firstSequence: 0)
        let starts = packets.filter { ForwardedKeyframe.h264($0.payload[...]) }
        // Each keyframe: the SPS packet, and the IDR slice's first fragment after the PPS.
        #expect(Array(Set(starts.map(\.timestamp))).sorted() == [0, 9000])
        let first = try #require(starts.first)
        #expect(first.payload[0] & 0x1F == 7)
        #expect(!ForwardedKeyframe.h264(packets.last!.payload[...]))
    }

    @Test func truncatedPayloadsAreNotKeyframes() {
        #expect(!ForwardedKeyframe.vp8([]))
        #expect(!ForwardedKeyframe.vp8([0x90, 0x80]))
        #expect(!ForwardedKeyframe.h264([0x7C]))
        #expect(!ForwardedKeyframe.h264([0x18, 0x00]))
    }
}
