import Testing
@testable import Publishing

/// Small real tags: the queue only looks at kind, timestamp and flags, but the bytes are valid FLV bodies.
private func video(_ ms: UInt32, key: Bool) -> FLVTag {
    FLVMuxer.videoTag(avcc: [0x00, 0x00, 0x00, 0x01, key ? 0x65 : 0x41], isKeyframe: key, timestampMs: ms, compositionTimeMs: 0)
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
    @Test("within the limit every tag is kept, in order")
    func keepsWithinLimit() {
        var queue = TagQueue(limitMs: 100)
        for tag in [video(0, key: true), audio(0), video(40, key: false), audio(21), video(80, key: false), audio(100)] {
            queue.push(tag)
        }
        #expect(describe(queue) == ["K0", "A0", "P40", "A21", "P80", "A100"])
        #expect(queue.droppedVideo == 0 && queue.droppedAudio == 0)
        var popped: [UInt32] = []
        while let tag = queue.popFirst() { popped.append(tag.timestampMs) }
        #expect(popped == [0, 0, 40, 21, 80, 100])
    }

    @Test("over the limit, dependent frames go first, then the oldest keyframe")
    func dropsDependentVideoThenKeyframes() {
        var queue = TagQueue(limitMs: 100)
        for tag in [video(0, key: true), video(40, key: false), video(80, key: false), video(120, key: true)] {
            queue.push(tag)
        }
        // P40 and P80 went first (a run ending at K120), then K0 because K0..K120 still spans 120 ms.
        #expect(describe(queue) == ["K120"])
        #expect(queue.droppedVideo == 3)
        queue.push(video(160, key: false))
        #expect(describe(queue) == ["K120", "P160"])
        #expect(!queue.videoNeedsKeyframe)
    }

    @Test("audio goes only when no video is left, and later dependent frames wait for a keyframe")
    func dropsAudioLastAndWaitsForKeyframe() {
        var queue = TagQueue(limitMs: 100)
        for tag in [audio(0), video(0, key: true), audio(50), video(50, key: false), audio(100), video(100, key: false), audio(150)] {
            queue.push(tag)
        }
        #expect(describe(queue) == ["A50", "A100", "A150"])
        #expect(queue.droppedVideo == 3 && queue.droppedAudio == 1)
        #expect(queue.videoNeedsKeyframe)
        queue.push(video(160, key: false))
        #expect(describe(queue) == ["A50", "A100", "A150"])
        #expect(queue.droppedVideo == 4)
        _ = queue.popFirst()
        queue.push(video(190, key: true))
        #expect(describe(queue) == ["A100", "A150", "K190"])
        queue.push(video(200, key: false))
        #expect(describe(queue) == ["A100", "A150", "K190", "P200"])
    }

    @Test("a dependent run stops at the next keyframe and keeps the audio between")
    func runStopsAtKeyframe() {
        var queue = TagQueue(limitMs: 1000)
        for tag in [video(0, key: true), video(40, key: false), audio(60), video(80, key: false), video(120, key: true),
                    video(160, key: false), audio(1010)] {
            queue.push(tag)
        }
        // 1010 − 0 > 1000: the oldest dependent run (P40, P80) goes; the span is still 1010, so the
        // next run (P160, to the end) goes too, then K0, then the span K120..A1010 fits.
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
}
