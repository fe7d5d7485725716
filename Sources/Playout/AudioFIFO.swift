import Media

/// A participant's decoded audio waiting for the mixer: interleaved stereo at 48 kHz.
///
/// It prebuffers `startFrames` against network jitter, trims back when a burst or a fast sender clock leaves a
/// surplus (so latency cannot creep up), takes lip-sync delay changes in pauses, and owes the blocks a catch-up
/// read found missing after a stall (`owedFrames`). docs/architecture.md, "The audio path", says why each rule is
/// as it is. One preallocated ring: reads and writes copy into caller buffers and allocate nothing.
public struct AudioFIFO {
    private var ring: [Float]
    private var readIndex = 0  // in samples (frames × 2)
    private var count = 0  // in samples
    private var primed = false
    public private(set) var startFrames: Int
    public private(set) var maxFrames: Int
    private let baseStartFrames: Int
    private let baseMaxFrames: Int
    /// Delay added for lip-sync (frames), on top of the prebuffer.
    public private(set) var syncDelayFrames = 0
    /// A lip-sync delay change not made yet (frames; positive: hold this voice back more). It waits for a quiet
    /// stretch, where the silence put in or the audio cut out is not heard, for at most `syncChangeMaxWaitReads`.
    public private(set) var pendingSyncChangeFrames = 0
    private var syncChangeWaitedReads = 0
    /// A stretch whose peak is below this (−40 dBFS) is quiet: a pause between words.
    public static let quietPeak: Float = 0.01
    public static let syncChangeMaxWaitReads = 100  // 2 s of 20 ms reads
    /// Reads that found the FIFO dry mid-stream (a gap heard; it then prebuffers again).
    public private(set) var underruns = 0
    /// Audio the mixer read while catching up after a stall and found not yet here: it belongs to the time the
    /// stall took, so the first that much to come is dropped instead of delaying the voice by it.
    public private(set) var owedFrames = 0
    /// Audio cut to keep this voice's delay down (a burst, a fast sender clock, a full ring): heard as a skip.
    public private(set) var trimmedFrames = 0
    /// Audio cut because lip-sync's hold shrank: cut only from quiet stretches (or after 2 s of waiting for one).
    public private(set) var syncCutFrames = 0
    public private(set) var margin = VoiceMargin()
    /// Silence put in front of the stream for lip-sync and not read yet: it is not the sender's audio.
    private var insertedAhead = 0
    /// The lowest fill (samples) seen by the reads of the current window.
    private var lowestFill = Int.max
    private var windowReads = 0
    public static let windowReads = 50

    public init(
        startFrames: Int = 2 * AudioFormat.blockFrames, maxFrames: Int = 10 * AudioFormat.blockFrames,
        capacityFrames: Int = 40 * AudioFormat.blockFrames
    ) {
        self.startFrames = startFrames
        self.maxFrames = maxFrames
        baseStartFrames = startFrames
        baseMaxFrames = maxFrames
        ring = [Float](repeating: 0, count: capacityFrames * 2)
    }

    public var bufferedFrames: Int { count / 2 }

    /// Appends `frames` of decoded audio: interleaved stereo, or mono (`channels` 1), which is written to
    /// both channels so the ring and the mixer keep one format. `arrivedMs`: when its packet came, for `margin`.
    public mutating func write(_ samples: [Float], frames: Int, channels: Int = 2, arrivedMs: Int64? = nil) {
        guard channels == 2 else { return writeMono(samples, frames: frames, arrivedMs: arrivedMs) }
        let n = min(frames * 2, samples.count, ring.count)
        if count + n > ring.count { drop(count + n - ring.count) }
        let start = (readIndex + count) % ring.count
        // Two bulk copies (up to the end of the ring, then from its start): this runs per packet per
        // speaker, and an element loop with bounds checks showed up at 4 % of a voice room's CPU.
        samples.withUnsafeBufferPointer { src in
            ring.withUnsafeMutableBufferPointer { dst in
                guard let from = src.baseAddress, let to = dst.baseAddress else { return }
                let first = min(n, dst.count - start)
                (to + start).update(from: from, count: first)
                if n > first { to.update(from: from + first, count: n - first) }
            }
        }
        wrote(n, arrivedMs: arrivedMs)
    }

    private mutating func writeMono(_ samples: [Float], frames: Int, arrivedMs: Int64?) {
        let n = min(frames, samples.count, ring.count / 2) * 2
        if count + n > ring.count { drop(count + n - ring.count) }
        let start = (readIndex + count) % ring.count
        samples.withUnsafeBufferPointer { src in
            ring.withUnsafeMutableBufferPointer { dst in
                guard let from = src.baseAddress, let to = dst.baseAddress else { return }
                var at = start
                for k in 0..<(n / 2) {
                    let sample = from[k]
                    to[at] = sample
                    at = at + 1 == dst.count ? 0 : at + 1
                    to[at] = sample
                    at = at + 1 == dst.count ? 0 : at + 1
                }
            }
        }
        wrote(n, arrivedMs: arrivedMs)
    }

    /// Appends `frames` of silence (a DTX frame), as `write` would zeros, without a source buffer.
    public mutating func writeSilence(frames: Int, arrivedMs: Int64? = nil) {
        let n = min(frames * 2, ring.count)
        if count + n > ring.count { drop(count + n - ring.count) }
        zero(n, from: (readIndex + count) % ring.count)
        wrote(n, arrivedMs: arrivedMs)
    }

    /// Counts `n` samples just put in the ring and trims back to the prebuffer past `maxFrames`.
    private mutating func wrote(_ n: Int, arrivedMs: Int64?) {
        count += n
        if let arrivedMs { margin.wrote(frames: n / 2, arrivedMs: arrivedMs) }
        if owedFrames > 0 {
            // The oldest audio here is the stall's: the mixer already played silence in its place.
            let paid = min(owedFrames, count / 2)
            owedFrames -= paid
            drop(paid * 2)
        }
        if count > maxFrames * 2 { drop(count - startFrames * 2) }
    }

    /// Zeroes `n` samples of the ring from `start` on, wrapping at its end.
    private mutating func zero(_ n: Int, from start: Int) {
        ring.withUnsafeMutableBufferPointer { dst in
            guard let to = dst.baseAddress else { return }
            let first = min(n, dst.count - start)
            (to + start).update(repeating: 0, count: first)
            if n > first { to.update(repeating: 0, count: n - first) }
        }
    }

    /// Fills one block; returns false (and leaves `output` untouched) when nothing is ready. `nowMs`: when the
    /// mixer reads, for `margin`. `catchingUp`: the mixer makes up for ticks a stall skipped, and the audio of that
    /// time may still be on its way (the senders stalled too): a block missing then is owed, not an underrun.
    public mutating func read(
        into output: inout [Float], frames: Int, nowMs: Int64? = nil, catchingUp: Bool = false
    ) -> Bool {
        let n = frames * 2
        if pendingSyncChangeFrames != 0 { considerSyncChange(frames: frames) }
        if !primed {
            guard count >= startFrames * 2 else { return false }
            primed = true
        }
        guard count >= n else {
            if catchingUp {
                owedFrames = min(owedFrames + frames, maxFrames)
                return false
            }
            // Underrun: start again from a full prebuffer rather than play scraps (and owe nothing: a voice
            // that went quiet would otherwise lose the start of what it says next).
            primed = false
            underruns += 1
            owedFrames = 0
            return false
        }
        guard output.count >= n else { return false }
        let start = readIndex
        ring.withUnsafeBufferPointer { src in
            output.withUnsafeMutableBufferPointer { dst in
                guard let from = src.baseAddress, let to = dst.baseAddress else { return }
                let first = min(n, src.count - start)
                to.update(from: from + start, count: first)
                if n > first { (to + first).update(from: from, count: n - first) }
            }
        }
        readIndex = (start + n) % ring.count
        count -= n
        consumed(frames)
        if let nowMs { margin.read(nowMs: nowMs) }
        lowestFill = min(lowestFill, count)
        windowReads += 1
        if windowReads == Self.windowReads {
            if lowestFill >= (startFrames + frames) * 2 { drop(lowestFill - startFrames * 2) }
            windowReads = 0
            lowestFill = Int.max
        }
        return true
    }

    /// Holds this voice back by `frames` (lip-sync with a slower video path), more or less than now. The change
    /// is made at the next quiet read (within 2 s): more delay as silence put in front of that read, less by
    /// cutting a stretch that is quiet all along, so the step is not heard. Before the prebuffer has filled,
    /// nothing is playing and it is made at once.
    public mutating func setSyncDelay(frames: Int) {
        let frames = max(0, min(frames, (ring.count / 2 - baseMaxFrames) / 2))
        pendingSyncChangeFrames = frames - syncDelayFrames
        syncChangeWaitedReads = 0
        if !primed { applySyncChange() }
    }

    private mutating func considerSyncChange(frames: Int) {
        syncChangeWaitedReads += 1
        let span = max(frames, -pendingSyncChangeFrames)  // all of what a cut removes must be quiet
        if !primed || syncChangeWaitedReads >= Self.syncChangeMaxWaitReads || isQuiet(frames: span) {
            applySyncChange()
        }
    }

    private mutating func applySyncChange() {
        let change = pendingSyncChangeFrames
        pendingSyncChangeFrames = 0
        guard change != 0 else { return }
        syncDelayFrames += change
        startFrames = baseStartFrames + syncDelayFrames
        maxFrames = baseMaxFrames + syncDelayFrames
        if change < 0 {
            drop(-change * 2, forSync: true)
        } else if primed {
            insertSilence(frames: change)
        }  // unprimed: the prebuffer now waits for the longer fill
    }

    /// Puts `frames` of silence in front of what is buffered, where the next read starts.
    private mutating func insertSilence(frames: Int) {
        let n = min(frames * 2, ring.count - count) & ~1
        readIndex = (readIndex - n + ring.count) % ring.count
        zero(n, from: readIndex)
        count += n
        insertedAhead += n / 2
    }

    /// Whether the next `frames` buffered (or all there is) stay below `quietPeak`.
    private func isQuiet(frames: Int) -> Bool {
        let n = min(frames * 2, count)
        return ring.withUnsafeBufferPointer { src in
            var at = readIndex
            for _ in 0..<n {
                if abs(src[at]) >= Self.quietPeak { return false }
                at = at + 1 == src.count ? 0 : at + 1
            }
            return true
        }
    }

    private mutating func drop(_ samples: Int, forSync: Bool = false) {
        let n = min(samples, count) & ~1
        readIndex = (readIndex + n) % ring.count
        count -= n
        if forSync { syncCutFrames += n / 2 } else { trimmedFrames += n / 2 }
        consumed(n / 2)
    }

    /// `frames` left the front of the ring: silence put in goes first, the rest was the sender's stream.
    private mutating func consumed(_ frames: Int) {
        let inserted = min(frames, insertedAhead)
        insertedAhead -= inserted
        margin.consumed(frames: frames - inserted)
    }
}
