import Foundation
import Media
import Playout
import Synchronization

/// What a source's reader has decoded, waiting for the room: its sound in an `AudioFIFO` the mixer pulls every
/// 20 ms, and its pictures queued by time, each shown once the sound being mixed has reached it (or, without sound,
/// once the wall clock has). The reader writes from its thread, the room reads from its queue: every entry point
/// takes `lock`.
///
/// Times are the feed's own seconds: the container's timestamps made continuous by the reader (loops and jumps
/// are stitched), so the feed never sees a discontinuity.
public final class SourceFeed: @unchecked Sendable {
    public let hasAudio: Bool
    public let hasVideo: Bool
    /// How far behind the input the programme plays it (a live source's jitter buffer).
    public let latencyMs: Int
    private let lock = NSLock()
    private var state: State
    /// Whether a region of the canvas shows the source: its pictures are decoded only then.
    private let shown = Atomic<Bool>(true)
    /// The H.264 the source forwards to receivers' slots, fixed when it joined (nil: it forwards nothing).
    public let forwardFormat: SourceVideoFormat?
    /// Whether a slot shows the source now (the room's tick): only then are access units prepared for slots.
    private let forwarded = Atomic<Bool>(false)
    /// A slot asked for a keyframe: what the source encodes for slots starts one (its own stream cannot).
    private let keyframeWanted = Atomic<Bool>(false)

    /// Pictures waiting for their time, at most: past this the oldest is dropped (the room stopped reading).
    static let maxQueuedPictures = 64
    /// Spare pictures kept for reuse.
    static let maxSparePictures = 8
    /// Access units waiting for their time, at most (about 4 s at 30 frames/s): past this the oldest goes, and
    /// what follows waits for a keyframe.
    static let maxQueuedUnits = 120
    /// A larger access unit is dropped, and what follows waits for a keyframe: no camera's picture is this big, and
    /// 120 of them would be gigabytes (the bound an RTP sender's reassembly has too).
    static let maxUnitBytes = 4 << 20
    static let maxSpareBuffers = 16

    /// One access unit of the source's H.264 for receivers' slots: AVCC, the parameter sets to send before it when
    /// it is a keyframe that lacks them, and its feed time. `epoch` counts the reader's connections: times start
    /// again with each.
    public struct ForwardedUnit: Sendable {
        public var time: Double
        public var epoch: Int
        public var avcc: [UInt8]
        public var keyframe: Bool
        public var parameterSets: (sps: [UInt8], pps: [UInt8])?
    }

    private struct State {
        var fifo: AudioFIFO
        /// Feed time at the end of the audio written.
        var audioEnd: Double?
        /// The audio prebuffer filled and the mixer reads: the sound's time is the clock pictures follow.
        var audioPlaying = false
        /// Feed time ↔ monotonic ms of the first unit since the last reset: the clock without sound, and the
        /// reader's pacing.
        var clock: (time: Double, ms: Int64)?
        var queue: [(time: Double, picture: SourcePicture)] = []
        var shown: SourcePicture?
        var shownAtMs: Int64 = 0
        var spare: [SourcePicture] = []
        var firstPicture: (width: Int, height: Int)?
        var firstPictureAnnounced = false
        var stats = SourceStatistics()
        var units: [ForwardedUnit] = []
        /// Buffers of units the room has sent, for the next ones (no allocation per unit in the steady state).
        var spareBuffers: [[UInt8]] = []
        var unitsWaitForKeyframe = false
        var epoch = 0
    }

    public init(hasAudio: Bool, hasVideo: Bool, latencyMs: Int, forwardFormat: SourceVideoFormat? = nil) {
        self.hasAudio = hasAudio
        self.hasVideo = hasVideo
        self.latencyMs = latencyMs
        self.forwardFormat = hasVideo ? forwardFormat : nil
        state = State(fifo: Self.fifo(latencyMs: latencyMs))
    }

    /// Prebuffers `latencyMs`; trims back to it past 300 ms more (a burst, a fast input clock).
    private static func fifo(latencyMs: Int) -> AudioFIFO {
        let block = AudioFormat.blockFrames
        let start = max(2 * block, latencyMs * AudioFormat.sampleRate / 1000 / block * block)
        return AudioFIFO(startFrames: start, maxFrames: start + 15 * block, capacityFrames: 2 * start + 50 * block)
    }

    // MARK: the room's side

    /// Copies the next 20 ms block into `output`; false when there is none.
    public func pull(into output: inout [Float], nowMs: Int64, catchingUp: Bool) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        let ok = state.fifo.read(into: &output, frames: AudioFormat.blockFrames, nowMs: nowMs, catchingUp: catchingUp)
        state.audioPlaying = ok
        return ok
    }

    /// The picture to show now, nil (the placeholder) when none has been shown for `holdMs`.
    public func picture(nowMs: Int64, holdMs: Int64) -> Picture? {
        lock.lock()
        defer { lock.unlock() }
        if let playout = playoutTime(nowMs: nowMs) {
            var newest: SourcePicture?
            while let first = state.queue.first, first.time <= playout {
                state.queue.removeFirst()
                if let dropped = newest { recycle(dropped) }
                newest = first.picture
            }
            if let newest {
                if let old = state.shown { recycle(old) }
                state.shown = newest
                state.shownAtMs = nowMs
                state.stats.picturesShown += 1
            }
        }
        guard let shown = state.shown, nowMs - state.shownAtMs <= holdMs else { return nil }
        return Picture(shown)
    }

    /// Says whether a region shows the source (the room's placement, from its queue).
    public func setShown(_ isShown: Bool) { shown.store(isShown, ordering: .relaxed) }
    var isShown: Bool { shown.load(ordering: .relaxed) }

    /// Says whether any receiver's slot shows the source (the room's tick).
    public func setForwarded(_ on: Bool) { forwarded.store(on, ordering: .relaxed) }
    var isForwarded: Bool { forwarded.load(ordering: .relaxed) }

    /// A receiver's slot wants a keyframe.
    public func requestKeyframe() { keyframeWanted.store(true, ordering: .relaxed) }
    func takeKeyframeRequest() -> Bool { keyframeWanted.exchange(false, ordering: .relaxed) }

    /// Moves the access units due now (played with the sound and pictures of the same time) into `out`, emptied
    /// first; the room packetizes them for the slots.
    public func takeDueUnits(nowMs: Int64, into out: inout [ForwardedUnit]) {
        out.removeAll(keepingCapacity: true)
        lock.withLock {
            guard let playout = playoutTime(nowMs: nowMs) else { return }
            var due = 0
            while due < state.units.count && state.units[due].time <= playout { due += 1 }
            guard due > 0 else { return }
            out.append(contentsOf: state.units[..<due])
            state.units.removeFirst(due)
        }
    }

    /// Gives back the buffers of units the room has sent (`out` of `takeDueUnits`), emptying it.
    public func recycle(_ sent: inout [ForwardedUnit]) {
        lock.withLock {
            for i in sent.indices where state.spareBuffers.count < Self.maxSpareBuffers {
                state.spareBuffers.append(sent[i].avcc)
                sent[i].avcc = []
            }
        }
        sent.removeAll(keepingCapacity: true)
    }

    /// The first picture's size, once, when it has been decoded (the room's `first_video_frame`).
    public func takeFirstPicture() -> (width: Int, height: Int)? {
        lock.withLock {
            guard let first = state.firstPicture, !state.firstPictureAnnounced else { return nil }
            state.firstPictureAnnounced = true
            return first
        }
    }

    public var statistics: SourceStatistics {
        lock.withLock {
            var s = state.stats
            s.audioBufferedMs = state.fifo.bufferedFrames * 1000 / AudioFormat.sampleRate
            s.underruns = state.fifo.underruns
            s.trimmedMs = state.fifo.trimmedFrames * 1000 / AudioFormat.sampleRate
            return s
        }
    }

    // MARK: the reader's side

    /// Forgets everything (the reader connected again): the placeholder shows until new pictures come.
    func reset() {
        lock.withLock {
            state.fifo = Self.fifo(latencyMs: latencyMs)
            state.audioEnd = nil
            state.audioPlaying = false
            state.clock = nil
            for queued in state.queue { recycle(queued.picture) }
            state.queue.removeAll(keepingCapacity: true)
            state.units.removeAll(keepingCapacity: true)
            state.unitsWaitForKeyframe = false
            state.epoch += 1
        }
    }

    /// An access unit for the slots, due at feed time `time`.
    func queueUnit(
        _ avcc: UnsafeRawBufferPointer, keyframe: Bool, parameterSets: (sps: [UInt8], pps: [UInt8])?, at time: Double,
        encoded: Bool
    ) {
        lock.withLock {
            guard avcc.count <= Self.maxUnitBytes else {
                state.unitsWaitForKeyframe = true
                state.stats.framesForwardDropped += 1
                return
            }
            if state.units.count >= Self.maxQueuedUnits {
                state.spareBuffers.append(state.units.removeFirst().avcc)
                state.unitsWaitForKeyframe = true
                state.stats.framesForwardDropped += 1
            }
            if state.unitsWaitForKeyframe {
                guard keyframe else {
                    state.stats.framesForwardDropped += 1
                    return
                }
                state.unitsWaitForKeyframe = false
            }
            var buffer = state.spareBuffers.popLast() ?? []
            buffer.removeAll(keepingCapacity: true)
            buffer.append(contentsOf: avcc)
            state.units.append(
                ForwardedUnit(
                    time: time, epoch: state.epoch, avcc: buffer, keyframe: keyframe,
                    parameterSets: keyframe ? parameterSets : nil))
            if encoded { state.stats.framesEncoded += 1 } else { state.stats.framesForwarded += 1 }
        }
    }

    /// A picture decoded only to be encoded for the slots (no region shows the source): back to the spares.
    func returnPicture(_ picture: SourcePicture) { lock.withLock { recycle(picture) } }

    /// The feed time the reader may read up to now (`aheadMs` past the time playing), nil before the first unit.
    func readableUntil(nowMs: Int64, aheadMs: Int) -> Double? {
        lock.withLock {
            state.clock.map { $0.time + Double(nowMs - $0.ms + Int64(aheadMs)) / 1000 }
        }
    }

    /// Where a unit the reader could not place would go: the wall clock's feed time now, nil before the first unit.
    func wallTime(nowMs: Int64) -> Double? {
        lock.withLock { state.clock.map { $0.time + Double(nowMs - $0.ms) / 1000 } }
    }

    /// Feed time at the end of the audio written, nil before any.
    var audioEnd: Double? { lock.withLock { state.audioEnd } }

    /// A live input's newest unit is now.
    func restartClock(at time: Double, nowMs: Int64) { lock.withLock { state.clock = (time, nowMs) } }

    /// The first unit after a reset starts the clock.
    func start(at time: Double, nowMs: Int64) {
        lock.withLock { if state.clock == nil { state.clock = (time, nowMs) } }
    }

    func writeAudio(_ samples: [Float], frames: Int, channels: Int, endingAt end: Double, nowMs: Int64) {
        lock.withLock {
            state.fifo.write(samples, frames: frames, channels: channels, arrivedMs: nowMs)
            state.audioEnd = end
            state.stats.audioFrames += 1
        }
    }

    /// Audio buffered now (frames at 48 kHz).
    var bufferedAudioFrames: Int { lock.withLock { state.fifo.bufferedFrames } }

    /// A picture to decode into: a spare one nobody holds any more, or a new one.
    func takePicture(width: Int, height: Int) -> SourcePicture {
        lock.withLock {
            for i in state.spare.indices.reversed() where isKnownUniquelyReferenced(&state.spare[i]) {
                let picture = state.spare.remove(at: i)
                picture.resize(width: width, height: height)
                return picture
            }
            return SourcePicture(width: width, height: height)
        }
    }

    /// A packet of pictures the reader did not decode: no region showed the source.
    func skippedPicture() { lock.withLock { state.stats.picturesSkipped += 1 } }

    func queuePicture(_ picture: SourcePicture, at time: Double) {
        lock.withLock {
            if state.queue.count >= Self.maxQueuedPictures {
                recycle(state.queue.removeFirst().picture)
                state.stats.picturesDropped += 1
            }
            // Pictures come in presentation order from the decoder; one out of order goes where it belongs.
            if let last = state.queue.last, last.time > time {
                let at = state.queue.firstIndex { $0.time > time } ?? state.queue.endIndex
                state.queue.insert((time, picture), at: at)
            } else {
                state.queue.append((time, picture))
            }
            state.stats.picturesDecoded += 1
            if state.firstPicture == nil { state.firstPicture = (picture.width, picture.height) }
        }
    }

    /// Under `lock`: the feed time being played now. The sound's, while it plays; else the wall clock's, `latencyMs`
    /// behind the input.
    private func playoutTime(nowMs: Int64) -> Double? {
        if hasAudio, state.audioPlaying, let end = state.audioEnd {
            return end - Double(state.fifo.bufferedFrames) / Double(AudioFormat.sampleRate)
        }
        return state.clock.map { $0.time + Double(nowMs - $0.ms - Int64(latencyMs)) / 1000 }
    }

    /// Under `lock`.
    private func recycle(_ picture: SourcePicture) {
        if state.spare.count < Self.maxSparePictures { state.spare.append(picture) }
    }
}

/// What a source's feed did, for `GET` and metrics.
public struct SourceStatistics: Sendable, Equatable {
    public var audioFrames = 0
    public var picturesDecoded = 0
    public var picturesShown = 0
    public var picturesDropped = 0
    /// Packets of pictures not decoded because no region showed the source.
    public var picturesSkipped = 0
    /// Access units of the source's own H.264 prepared for receivers' slots, pictures encoded for them (its own
    /// stream could not go as it is), and units dropped because the room did not take them in time.
    public var framesForwarded = 0
    public var framesEncoded = 0
    public var framesForwardDropped = 0
    public var audioBufferedMs = 0
    public var underruns = 0
    public var trimmedMs = 0
    public init() {}
}
