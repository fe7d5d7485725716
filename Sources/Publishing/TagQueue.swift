/// The bounded queue between `send` and an output's thread, measured in milliseconds of media.
///
/// When the timestamps in the queue span more than `limitMs`, the oldest droppable media goes, in
/// this order (video before audio, so a slow link loses pictures before sound):
/// 1. a run of dependent video frames (from the oldest non-keyframe up to the next keyframe, since
///    every frame in the run needs the one before it);
/// 2. video keyframes, oldest first;
/// 3. audio and data tags, only once no video is left.
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
    /// True after the newest queued video was dropped: dependent frames wait for a keyframe.
    private(set) var videoNeedsKeyframe = false

    init(limitMs: Int) {
        self.limitMs = max(0, limitMs)
    }

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
        while isOverLimit {
            if !dropOldestDependentVideoRun() && !dropOldestVideoKeyframe() && !dropOldestAudioOrData() { break }
        }
    }

    mutating func popFirst() -> FLVTag? {
        tags.isEmpty ? nil : tags.removeFirst()
    }

    /// Counts the tags thrown away by the caller (e.g. video skipped after a reconnect) with the queue's own drops.
    mutating func countDroppedVideo(_ n: Int = 1) { droppedVideo += n }

    /// The span from the oldest droppable tag to the newest one, in milliseconds.
    var spanMs: Int {
        guard let last = tags.last, let first = tags.first(where: { !$0.isSequenceHeader }) else { return 0 }
        return max(0, Int(last.timestampMs) - Int(first.timestampMs))
    }

    private var isOverLimit: Bool { tags.count > Self.maxTags || spanMs > limitMs }

    private mutating func dropOldestDependentVideoRun() -> Bool {
        guard let start = tags.firstIndex(where: \.isDependentVideo) else { return false }
        var index = start
        var reachedKeyframe = false
        while index < tags.count {
            let tag = tags[index]
            if tag.kind == .video && !tag.isSequenceHeader {
                if tag.isKeyframe { reachedKeyframe = true; break }
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
        tags.remove(at: index)
        droppedAudio += 1
        return true
    }
}
