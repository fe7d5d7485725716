import Testing
@testable import Publishing

/// Small real tags: the queue only looks at kind, timestamp and flags, but the bytes are valid FLV bodies.
private func video(_ ms: UInt32, key: Bool) -> FLVTag {
    FLVMuxer.videoTag(
        avcc: [0x00, 0x00, 0x00, 0x01, key ? 0x65 : 0x41], isKeyframe: key, timestampMs: ms, compositionTimeMs: 0)
}

private func audio(_ ms: UInt32) -> FLVTag {
    FLVMuxer.audioTag(aac: [0x21, 0x10, 0x04], timestampMs: ms)
}

private func describe(_ queue: TagQueue) -> [String] {
    queue.tags.map { tag in
        switch tag.kind {
        case .video: "\(tag.isSequenceHeader ? "S" : tag.isKeyframe ? "K" : "P")\(tag.timestampMs)"
        case .audio: "\(tag.isSequenceHeader ? "s" : "A")\(tag.timestampMs)"
        case .script: "D\(tag.timestampMs)"
        }
    }
}

@Suite("Output queue drop policy")
struct TagQueueTests {
    @Test("within half the limit every tag is kept, in order")
    func keepsWithinLimit() {
        var queue = TagQueue(limitMs: 200)
        #expect(queue.videoLimitMs == 100)
        for tag in [video(0, key: true), audio(0), video(40, key: false), audio(21), video(80, key: false), audio(100)]
        {
            queue.push(tag)
        }
        #expect(describe(queue) == ["K0", "A0", "P40", "A21", "P80", "A100"])
        #expect(queue.droppedVideo == 0 && queue.droppedAudio == 0)
        var popped: [UInt32] = []
        while let tag = queue.popFirst() { popped.append(tag.timestampMs) }
        #expect(popped == [0, 0, 40, 21, 80, 100])
    }

    @Test("past half the limit, dependent frames go first, then the oldest keyframe")
    func dropsDependentVideoThenKeyframes() {
        var queue = TagQueue(limitMs: 200)
        for tag in [video(0, key: true), video(40, key: false), video(80, key: false), video(120, key: true)] {
            queue.push(tag)
        }
        // K120 makes the span 120 ms (over 100): P40 and P80 go first (a run ending at K120), then K0
        // because K0..K120 still spans 120 ms.
        #expect(describe(queue) == ["K120"])
        #expect(queue.droppedVideo == 3)
        queue.push(video(160, key: false))
        #expect(describe(queue) == ["K120", "P160"])
        #expect(!queue.videoNeedsKeyframe)
    }

    @Test("audio goes only past the whole limit and only when no video is left; video waits for room and a keyframe")
    func dropsAudioLastAndWaitsForKeyframe() {
        var queue = TagQueue(limitMs: 200)
        for tag in [
            audio(0), video(0, key: true), audio(50), video(50, key: false), audio(100), video(100, key: false),
            audio(150),
        ] {
            queue.push(tag)
        }
        // A150: span 150 > 100, so all video goes (P50–P100, then K0); 150 ≤ 200, so every audio tag stays.
        #expect(describe(queue) == ["A0", "A50", "A100", "A150"])
        #expect(queue.droppedVideo == 3 && queue.droppedAudio == 0)
        #expect(queue.videoNeedsKeyframe)
        queue.push(audio(250))  // 250 > 200: the oldest audio goes
        #expect(describe(queue) == ["A50", "A100", "A150", "A250"])
        #expect(queue.droppedAudio == 1)
        queue.push(video(260, key: false))  // dependent, refused
        queue.push(video(270, key: true))  // 270 − 50 > 100: too late even for a keyframe
        #expect(describe(queue) == ["A50", "A100", "A150", "A250"])
        #expect(queue.droppedVideo == 5 && queue.droppedAudio == 1)
        _ = queue.popFirst()
        _ = queue.popFirst()
        queue.push(video(290, key: true))  // 290 − 150 > 100: still too late
        #expect(queue.droppedVideo == 6)
        _ = queue.popFirst()
        queue.push(video(300, key: true))  // 300 − 250 = 50: fits
        queue.push(video(310, key: false))
        #expect(describe(queue) == ["A250", "K300", "P310"])
        #expect(queue.droppedVideo == 6 && !queue.videoNeedsKeyframe)
    }

    @Test("a dependent run stops at the next keyframe and keeps the audio between")
    func runStopsAtKeyframe() {
        var queue = TagQueue(limitMs: 2000)
        for tag in [
            video(0, key: true), video(40, key: false), audio(60), video(80, key: false), video(120, key: true),
            video(160, key: false), audio(1010),
        ] {
            queue.push(tag)
        }
        // 1010 − 0 > 1000 (half the limit): the oldest dependent run (P40, P80) goes; the span is still
        // 1010, so the next run (P160, to the end) goes too, then K0, then the span A60..A1010 fits.
        #expect(describe(queue) == ["A60", "K120", "A1010"])
        #expect(queue.droppedVideo == 4 && queue.droppedAudio == 0)
        #expect(queue.videoNeedsKeyframe)
    }

    @Test("sequence headers are never dropped and do not count towards the span")
    func keepsSequenceHeaders() {
        var queue = TagQueue(limitMs: 100)
        queue.push(FLVMuxer.aacSequenceHeader([0x11, 0x90]))
        for ms in stride(from: UInt32(1000), through: 1300, by: 50) { queue.push(audio(ms)) }
        #expect(describe(queue) == ["s0", "A1200", "A1250", "A1300"])
        #expect(queue.droppedAudio == 4)
    }

    @Test("equal timestamps cannot grow the queue past its tag cap")
    func tagCap() {
        var queue = TagQueue(limitMs: 2000)
        for _ in 0..<(TagQueue.maxTags + 5) { queue.push(audio(7)) }
        #expect(queue.count == TagQueue.maxTags)
        #expect(queue.droppedAudio == 5)
    }

    /// A real stream shape: 24 fps video with a keyframe every 24 frames (dts = n·1000/24 ms) and AAC
    /// at 48 kHz (pts = k·1024 samples = k·64/3 ms), interleaved by timestamp, audio first on ties.
    private func stream(seconds: Int) -> [FLVTag] {
        var videoTags: [FLVTag] = []
        for n in 0..<(24 * seconds) {
            let ms = UInt32(n * 1000 / 24)
            videoTags.append(video(ms, key: n % 24 == 0))
        }
        var audioTags: [FLVTag] = []
        var k = 0
        while k * 64 / 3 < seconds * 1000 {
            audioTags.append(audio(UInt32(k * 64 / 3)))
            k += 1
        }
        let all: [FLVTag] = audioTags + videoTags
        let order: [Int] = all.indices.sorted { (a: Int, b: Int) -> Bool in
            let keyA = (all[a].timestampMs, all[a].kind.rawValue, a)
            let keyB = (all[b].timestampMs, all[b].kind.rawValue, b)
            return keyA < keyB
        }
        return order.map { all[$0] }
    }

    @Test("a saturated queue holds only audio: video goes before audio even when it is newer")
    func saturatedQueueDropsAllVideo() {
        // 5 s pushed into a 2 s queue that nobody drains (a dead connection).
        let tags = stream(seconds: 5)
        #expect(tags.filter { $0.kind == .video }.count == 120 && tags.filter { $0.kind == .audio }.count == 235)
        var queue = TagQueue(limitMs: 2000)
        for tag in tags { queue.push(tag) }
        // Once the span passes 1000 ms (A1002), every video tag goes; from then on the queue never spans
        // less than that again (nothing drains it), so every later frame is refused or dropped on arrival.
        // Audio goes only past 2000 ms: what stays is A3008 (k = 141) … A4992 (k = 234), since A2986
        // (k = 140) would make the span 2006 ms.
        #expect(queue.count == 94)
        #expect(queue.tags.allSatisfy { $0.kind == .audio })
        #expect(queue.tags.first?.timestampMs == 3008 && queue.tags.last?.timestampMs == 4992)
        #expect(queue.spanMs == 1984)
        #expect(queue.droppedVideo == 120)
        #expect(queue.droppedAudio == 235 - 94)
        #expect(queue.videoNeedsKeyframe)
    }

    @Test("the first overflow of a real stream: exactly which tags go")
    func firstOverflowExactly() {
        var queue = TagQueue(limitMs: 2000)
        let tags = stream(seconds: 3)
        // Up to and including K1000 everything fits (1000 − 0 is not over half the limit):
        // frames 0–24 and A0 … A981 (k = 0…46).
        let upToK1000 = tags.prefix { $0.timestampMs <= 1000 }
        for tag in upToK1000 { queue.push(tag) }
        #expect(queue.count == upToK1000.count && queue.count == 25 + 47)
        #expect(queue.droppedVideo == 0 && queue.droppedAudio == 0)
        // A1002 (k = 47): the run P41…P958 goes, then K0 and K1000; A0 keeps the span at 1002 ms, which
        // is within the whole limit, so no audio goes.
        queue.push(audio(1002))
        #expect(describe(queue).first == "A0" && describe(queue).last == "A1002")
        #expect(queue.count == 48 && queue.droppedVideo == 25 && queue.droppedAudio == 0)
        // Dependent frames are refused until the next keyframe.
        queue.push(video(1041, key: false))
        #expect(queue.droppedVideo == 26 && queue.count == 48)
    }

    @Test("data tags share the audio timeline and are counted apart")
    func dataTagsCountedApart() {
        var queue = TagQueue(limitMs: 100)
        queue.push(FLVMuxer.dataTag(name: "onVoiceLevels", values: [.number(1)], timestampMs: 0))
        queue.push(audio(10))
        queue.push(audio(150))
        #expect(describe(queue) == ["A150"])
        #expect(queue.droppedData == 1 && queue.droppedAudio == 1)
    }

    @Test("the span is from the oldest to the newest tag even when pictures run ahead of the sound")
    func spanUnderLowLatencyOrder() {
        var queue = TagQueue(limitMs: 2000)
        queue.push(
            FLVMuxer.videoTag(avcc: [0, 0, 0, 1, 0x65], isKeyframe: true, timestampMs: 1100, compositionTimeMs: 0))
        queue.push(FLVMuxer.audioTag(aac: [0x21], timestampMs: 1000))
        queue.push(FLVMuxer.audioTag(aac: [0x21], timestampMs: 1021))
        // Newest is the picture, oldest the first sound: neither end of the queue.
        #expect(queue.spanMs == 100)
    }

    @Test("pictures stamped ahead of their sound by the video lead are not counted as queued media")
    func videoLeadIsNotBacklog() {
        // A healthy link under the low-latency order: 60 ms of sound and the pictures of the same instants,
        // stamped 150 ms ahead. Without the lead the span would be 210 ms, over the 100 ms video limit.
        var queue = TagQueue(limitMs: 200)
        for ms: UInt32 in [0, 20, 40, 60] {
            var picture = video(ms + 150, key: ms == 0)
            picture.leadMs = 150
            queue.push(picture)
            queue.push(audio(ms))
        }
        #expect(queue.spanMs == 60)
        #expect(queue.droppedVideo == 0 && queue.droppedAudio == 0)
        #expect(describe(queue) == ["K150", "A0", "P170", "A20", "P190", "A40", "P210", "A60"])
        // A real backlog still drops video: sound 120 ms on makes the span 120 ms (> 100).
        queue.push(audio(120))
        #expect(queue.droppedVideo == 4)
        #expect(describe(queue) == ["A0", "A20", "A40", "A60", "A120"])
    }

    @Test("the lead is bookkeeping: tags that differ only in it are equal")
    func leadIsNotPartOfEquality() {
        var ahead = video(40, key: true)
        ahead.leadMs = 100
        #expect(ahead == video(40, key: true))
    }
}
