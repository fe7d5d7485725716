/// Where a (re)started connection or file begins: at a video keyframe, with the audio of that moment.
///
/// After every connect the receiver knows nothing: dependent video before the first keyframe would be
/// undecodable, so it is skipped. In a stream with video, audio and data tags that come before that
/// keyframe are held; when it arrives, those within `alignmentMs` of it are written first and older ones
/// (queued during an outage) are skipped, so the new stream starts with sound and picture together
/// instead of seconds of sound before the first picture. If no keyframe comes within `holdLimitMs` of
/// held audio, the gate stops holding audio (sound matters more than alignment). That limit is in media
/// time and must exceed the queue limit: after an outage the whole queue (all audio) arrives at once,
/// ahead of the keyframe asked for on connect. Audio-only streams pass.
///
/// One per connection, owned by the output's worker thread. `held` keeps its capacity between tags.
struct StartGate {
    /// Audio this much older than the first keyframe is still written (an AAC frame is 21.3 ms).
    static let alignmentMs: UInt32 = 40

    let holdLimitMs: UInt32
    private var awaitingKeyframe = true
    private var holdingAudio: Bool
    private var held: [FLVTag] = []
    /// Once the first keyframe went out: audio and data older than this are skipped. Under the low-latency
    /// interleave the sound of the keyframe's moment arrives after it, and is written; what came before is not.
    private var audioFloorMs: UInt32 = 0

    /// `hasVideo`: the stream's headers include an AVC sequence header. `queueLimitMs`: the output's
    /// queue limit; audio is held for up to a second of media beyond it.
    init(hasVideo: Bool, queueLimitMs: Int) {
        holdLimitMs = UInt32(clamping: max(0, queueLimitMs) + 1000)
        holdingAudio = hasVideo
        held.reserveCapacity(64)
    }

    /// Takes the next tag from the queue; appends what may be written now, in order, to `out`.
    /// Returns how many video and audio/data tags were skipped.
    mutating func admit(_ tag: FLVTag, into out: inout [FLVTag]) -> (video: Int, audio: Int) {
        if tag.kind == .video && !tag.isSequenceHeader {
            guard awaitingKeyframe else {
                out.append(tag)
                return (0, 0)
            }
            guard tag.isKeyframe else { return (1, 0) }
            awaitingKeyframe = false
            let skipped = releaseHeld(from: tag.timestampMs, into: &out)
            out.append(tag)
            return (0, skipped)
        }
        guard holdingAudio else {
            guard tag.timestampMs >= audioFloorMs || tag.isSequenceHeader else { return (0, 1) }
            out.append(tag)
            return (0, 0)
        }
        held.append(tag)
        if let first = held.first, tag.timestampMs > first.timestampMs + holdLimitMs {
            _ = releaseHeld(from: 0, into: &out)  // no keyframe in sight: stop holding sound back
        }
        return (0, 0)
    }

    /// What is still held (at stop): written rather than lost.
    mutating func flush(into out: inout [FLVTag]) {
        _ = releaseHeld(from: 0, into: &out)
    }

    /// Writes the held tags at or after `keyframeMs − alignmentMs`, skips the rest, and stops holding.
    private mutating func releaseHeld(from keyframeMs: UInt32, into out: inout [FLVTag]) -> Int {
        let earliest = keyframeMs > Self.alignmentMs ? keyframeMs - Self.alignmentMs : 0
        // Only a gate that was holding sets the floor: sound that already flowed (no keyframe in time) goes on.
        if holdingAudio { audioFloorMs = earliest }
        var skipped = 0
        for tag in held {
            if tag.timestampMs >= earliest { out.append(tag) } else { skipped += 1 }
        }
        held.removeAll(keepingCapacity: true)
        holdingAudio = false
        return skipped
    }
}
