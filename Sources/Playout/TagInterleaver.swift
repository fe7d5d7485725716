/// A tag the interleaver orders: audio and video lanes by timestamp (script data travels in the audio lane).
public protocol InterleavedTag {
    var isVideo: Bool { get }
    var timestampMs: UInt32 { get set }
    /// How far ahead of its sound a picture was stamped: cleared once the tag has waited for that sound.
    var leadMs: UInt32 { get set }
}

/// Orders audio and video tags by timestamp before they reach the outputs.
///
/// The AAC encoder hands out frames ≈43 ms after their samples were mixed, and the video is stamped
/// ahead of its compose time (`VideoLead`), so for the same instant the picture is ready well before
/// the sound. Two policies (`OutputOptions.Interleave`):
/// - `strict`: tags wait here until the other kind has caught up, for at most `maxWaitMs` of media (so a
///   kind that stops cannot hold the other back), and timestamps never go backwards across both kinds.
///   Files use it (a player seeking in a file expects it), and RTMP servers that insist on it.
/// - `lowLatency`: each kind leaves as soon as it is encoded and is monotonic on its own, as RTMP allows
///   (audio and video travel on their own chunk streams, see `RTMPSession`). The picture then reaches the
///   server ≈100 ms sooner; players still line both up by timestamp.
///
/// Inlinable, so the room specialises it for its tag type: unspecialised generic code took `Array.removeFirst`
/// through `RangeReplaceableCollection` and allocated on every tag (hot path: every encoded frame).
public struct TagInterleaver<Tag: InterleavedTag> {
    @usableFromInline var audio: [Tag] = []
    @usableFromInline var video: [Tag] = []
    @usableFromInline var lastReleased: UInt32 = 0
    @usableFromInline var lastAudio: UInt32 = 0
    @usableFromInline var lastVideo: UInt32 = 0
    public let interleavesVideo: Bool
    public let lowLatency: Bool
    public let maxWaitMs: UInt32

    /// The default wait covers the largest video lead (`VideoLead.maxLeadMs`, 200 ms) plus the AAC encoder's
    /// delay (≈64 ms with priming) and a 20 ms block: a shorter one would let a picture stamped ahead go out
    /// before the sound of its time, and that sound would then be clamped later.
    @inlinable
    public init(hasVideo: Bool, lowLatency: Bool = false, maxWaitMs: UInt32 = 400) {
        interleavesVideo = hasVideo
        self.lowLatency = lowLatency
        self.maxWaitMs = maxWaitMs
        audio.reserveCapacity(64)
        video.reserveCapacity(64)
    }

    /// Adds a tag and appends every tag now safe to send, in timestamp order, to `out`.
    /// Each lane is expected in timestamp order; a tag out of order is released late rather than trap.
    @inlinable
    public mutating func push(_ tag: Tag, into out: inout [Tag]) {
        if lowLatency {
            // Straight through; only each kind's own order is kept (a late tag takes its lane's last time).
            var tag = tag
            if tag.isVideo {
                if tag.timestampMs < lastVideo { tag.timestampMs = lastVideo }
                lastVideo = tag.timestampMs
            } else {
                if tag.timestampMs < lastAudio { tag.timestampMs = lastAudio }
                lastAudio = tag.timestampMs
            }
            out.append(tag)
            return
        }
        if tag.isVideo { video.append(tag) } else { audio.append(tag) }
        guard interleavesVideo else {
            while !audio.isEmpty { release(audio.remove(at: 0), into: &out) }
            while !video.isEmpty { release(video.remove(at: 0), into: &out) }
            return
        }
        let newest = max(audio.last?.timestampMs ?? 0, video.last?.timestampMs ?? 0)
        while true {
            if let a = audio.first, let v = video.first {
                if a.timestampMs <= v.timestampMs {
                    release(audio.remove(at: 0), into: &out)
                } else {
                    release(video.remove(at: 0), into: &out)
                }
            } else if let a = audio.first, newest > a.timestampMs, newest - a.timestampMs > maxWaitMs {
                release(audio.remove(at: 0), into: &out)
            } else if let v = video.first, newest > v.timestampMs, newest - v.timestampMs > maxWaitMs {
                release(video.remove(at: 0), into: &out)
            } else {
                return
            }
        }
    }

    /// Everything still waiting, in order (at close).
    @inlinable
    public mutating func flush(into out: inout [Tag]) {
        let rest = (audio + video).sorted { $0.timestampMs < $1.timestampMs }
        audio.removeAll()
        video.removeAll()
        for tag in rest { release(tag, into: &out) }
    }

    @usableFromInline
    mutating func release(_ tag: Tag, into out: inout [Tag]) {
        var tag = tag
        // Never backwards, even if a late tag slipped past the wait.
        if tag.timestampMs < lastReleased { tag.timestampMs = lastReleased }
        lastReleased = tag.timestampMs
        // In this order a picture has already waited for the sound of its instant: its raw timestamp is
        // the right measure of an output queue's backlog, so the lead is no longer subtracted.
        tag.leadMs = 0
        out.append(tag)
    }
}
