/// The bounded queue between `send` and an output's thread, measured in milliseconds of media.
///
/// Two bounds on the span of the queued timestamps, so a slow link loses pictures before sound:
/// - over `videoLimitMs` (half the limit), video goes: first a run of dependent frames (from the oldest
///   non-keyframe up to the next keyframe, since every frame in the run needs the one before it), then
///   keyframes, oldest first, until the span fits or no video is left;
/// - over `limitMs`, audio and data go too, oldest first (only once no video is left).
/// Dropping video at half the limit leaves the other half as headroom for audio: a link that stalls on
/// one large keyframe, with the queue already full of video, would otherwise have to drop sound.
/// Sequence headers are never dropped. Once the newest video in the queue has been dropped, later
/// dependent frames are refused until the next keyframe, so the output never sends undecodable video.
///
/// Not thread-safe: the owning output guards it with its lock. The queue is a plain array; it holds a
/// few hundred tags at most (2 s at 24 fps plus 47 AAC frames/s), so removing from the front is cheap.
struct TagQueue {
    /// A hard cap on the tag count, so a stream of equal (or broken) timestamps cannot grow the queue without bound.
    static let maxTags = 10_000

    let limitMs: Int
    private(set) var tags: [FLVTag] = []
    private(set) var droppedVideo = 0
    private(set) var droppedAudio = 0
    private(set) var droppedData = 0
    /// True after the newest queued video was dropped: dependent frames wait for a keyframe.
    private(set) var videoNeedsKeyframe = false

    init(limitMs: Int) {
        self.limitMs = max(0, limitMs)
    }

    /// Video is dropped once the queue spans more than this.
    var videoLimitMs: Int { limitMs / 2 }
    var count: Int { tags.count }
    var isEmpty: Bool { tags.isEmpty }

    mutating func push(_ tag: FLVTag) {
        if tag.kind == .video && !tag.isSequenceHeader {
            if tag.isKeyframe {
                videoNeedsKeyframe = false
            } else if videoNeedsKeyframe {
                droppedVideo += 1
                return
            }
        }
        tags.append(tag)
        while tags.count > Self.maxTags || spanMs > videoLimitMs {
            if dropOldestDependentVideoRun() || dropOldestVideoKeyframe() { continue }
            guard tags.count > Self.maxTags || spanMs > limitMs, dropOldestAudioOrData() else { break }
        }
    }

    mutating func popFirst() -> FLVTag? {
        tags.isEmpty ? nil : tags.removeFirst()
    }

    /// The span from the oldest droppable tag to the newest one, in milliseconds of the programme clock:
    /// each tag's timestamp less its `leadMs`, so pictures stamped ahead of their sound (the video lead) do
    /// not count as backlog. Under the low-latency interleave neither end of the queue is necessarily the
    /// oldest or newest: one pass takes the extremes (a few hundred tags at most).
    var spanMs: Int {
        var oldest = Int.max
        var newest = Int.min
        for tag in tags where !tag.isSequenceHeader {
            let clockMs = Int(tag.timestampMs) - Int(tag.leadMs)
            oldest = min(oldest, clockMs)
            newest = max(newest, clockMs)
        }
        return oldest == .max ? 0 : newest - oldest
    }

    private mutating func dropOldestDependentVideoRun() -> Bool {
        guard let start = tags.firstIndex(where: \.isDependentVideo) else { return false }
        var index = start
        var reachedKeyframe = false
        while index < tags.count {
            let tag = tags[index]
            if tag.kind == .video && !tag.isSequenceHeader {
                if tag.isKeyframe {
                    reachedKeyframe = true
                    break
                }
                tags.remove(at: index)
                droppedVideo += 1
            } else {
                index += 1
            }
        }
        if !reachedKeyframe { videoNeedsKeyframe = true }
        return true
    }

    private mutating func dropOldestVideoKeyframe() -> Bool {
        guard let index = tags.firstIndex(where: { $0.kind == .video && !$0.isSequenceHeader }) else { return false }
        tags.remove(at: index)
        droppedVideo += 1
        if !tags.contains(where: { $0.kind == .video && !$0.isSequenceHeader }) { videoNeedsKeyframe = true }
        return true
    }

    private mutating func dropOldestAudioOrData() -> Bool {
        guard let index = tags.firstIndex(where: { $0.kind != .video && !$0.isSequenceHeader }) else { return false }
        // Audio and data tags share one timeline: drop whichever is oldest.
        if tags.remove(at: index).kind == .audio { droppedAudio += 1 } else { droppedData += 1 }
        return true
    }
}
