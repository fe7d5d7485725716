import Publishing

/// Orders audio and video tags by timestamp before they reach the outputs.
///
/// The AAC encoder hands out frames a little later than the video encoder does for the same
/// instant, and RTMP servers want timestamps that never go backwards across both kinds. Tags
/// wait here until the other kind has caught up, for at most `maxWaitMs` of media, so a stream
/// that stops (audio-only moments, a stalled encoder) cannot hold the other back.
struct TagInterleaver {
    private var audio: [FLVTag] = []
    private var video: [FLVTag] = []
    private var lastReleased: UInt32 = 0
    let interleavesVideo: Bool
    let maxWaitMs: UInt32

    init(hasVideo: Bool, maxWaitMs: UInt32 = 200) {
        interleavesVideo = hasVideo
        self.maxWaitMs = maxWaitMs
        audio.reserveCapacity(64)
        video.reserveCapacity(64)
    }

    /// Adds a tag and appends every tag now safe to send, in timestamp order, to `out`.
    /// Each lane is expected in timestamp order; a tag out of order is released late rather than trap.
    mutating func push(_ tag: FLVTag, into out: inout [FLVTag]) {
        if tag.kind == .video { video.append(tag) } else { audio.append(tag) }
        guard interleavesVideo else {
            while !audio.isEmpty { release(audio.removeFirst(), into: &out) }
            while !video.isEmpty { release(video.removeFirst(), into: &out) }
            return
        }
        let newest = max(audio.last?.timestampMs ?? 0, video.last?.timestampMs ?? 0)
        while true {
            if let a = audio.first, let v = video.first {
                if a.timestampMs <= v.timestampMs { release(audio.removeFirst(), into: &out) }
                else { release(video.removeFirst(), into: &out) }
            } else if let a = audio.first, newest > a.timestampMs, newest - a.timestampMs > maxWaitMs {
                release(audio.removeFirst(), into: &out)
            } else if let v = video.first, newest > v.timestampMs, newest - v.timestampMs > maxWaitMs {
                release(video.removeFirst(), into: &out)
            } else {
                return
            }
        }
    }

    /// Everything still waiting, in order (at close).
    mutating func flush(into out: inout [FLVTag]) {
        let rest = (audio + video).sorted { $0.timestampMs < $1.timestampMs }
        audio.removeAll(); video.removeAll()
        for tag in rest { release(tag, into: &out) }
    }

    private mutating func release(_ tag: FLVTag, into out: inout [FLVTag]) {
        var tag = tag
        // Never backwards, even if a late tag slipped past the wait.
        if tag.timestampMs < lastReleased { tag.timestampMs = lastReleased }
        lastReleased = tag.timestampMs
        out.append(tag)
    }
}
