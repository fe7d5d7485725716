import Foundation
import Logging
import Media
import Mixing

/// A room's sound: every 20 ms each voice's next block is pulled, mixed and encoded, and the voice meters advance.
/// When the clock skipped ticks (the machine stalled), the next tick mixes their blocks too, so no voice is left
/// a block behind and the programme's sound stays at its pictures' time (docs/architecture.md, "The clock").
/// Confined to the room's queue.
final class AudioPipeline {
    /// The most blocks one tick makes up for (a voice's FIFO holds at most 10): past that the programme's sound
    /// restarts at the tick's time, leaving a gap, rather than mix a burst of stale audio.
    static let maxCatchUpBlocks: Int64 = 10

    private let room: String
    private let programme: ProgrammeFeed
    private let events: EventHub
    private let logger: Logger
    private var mixer = AudioMixer()
    private var mixBlock = [Float](repeating: 0, count: AudioFormat.blockFrames * 2)
    private var inputBlocks: [[Float]] = []
    private var mixInputs: [MixInput] = []
    /// Per participant of the tick: whether their block went into the sum, and at what gain.
    private var voices: [(ok: Bool, gain: Float)] = []
    /// Every voice summed, before the limiter: what mix-minus takes each talker out of.
    private var sum = [Float](repeating: 0, count: MixMinus.blockSamples)
    private let mixMinus: MixMinusSender
    /// The room's viewers (WHEP) this tick: they get the programme's mix.
    private var viewers: [Participant] = []
    private var voice = VoiceActivity()
    /// The active speaker now (for the slots' last-N).
    var activeSpeaker: String? { voice.activeSpeaker }
    /// The last reported levels, read by GET room from any thread.
    let published = PublishedVoiceReport()
    /// The participants of the current tick, in join order (storage reused between ticks).
    private(set) var present: [Participant] = []
    private var lastTick: Int64?
    /// Audio blocks of ticks the clock skipped, mixed late by the tick after; and skips too long to make up.
    private(set) var blocksCaughtUp = 0
    private(set) var gaps = 0

    init(
        room: String, programme: ProgrammeFeed, events: EventHub, logger: Logger,
        returnTransport: @escaping MixMinusSender.Transport
    ) {
        mixMinus = MixMinusSender(transport: returnTransport, logger: logger)
        self.room = room
        self.programme = programme
        self.events = events
        self.logger = logger
    }

    /// Takes the tick's participants from the roster, in place (hot path: the roster's getter builds an array).
    func gather(from roster: Roster) {
        roster.fill(&present)
        if roster.hasViewers { roster.fillViewers(&viewers) } else { viewers.removeAll(keepingCapacity: true) }
        if inputBlocks.count < present.count {
            inputBlocks.append(
                contentsOf: Array(
                    repeating: [Float](repeating: 0, count: AudioFormat.blockFrames * 2),
                    count: present.count - inputBlocks.count))
        }
    }

    /// Mixes and encodes the block of tick `index`, and those of any ticks the clock skipped before it, metering
    /// each block; the `departed` are forgotten by the meters first.
    func mix(tick index: Int64, nowMs now: Int64, departed: [String] = []) {
        for userId in departed { voice.remove(userId: userId) }
        var first = index
        if let last = lastTick, index > last + 1 {
            let missed = index - last - 1
            if missed <= Self.maxCatchUpBlocks {
                first = last + 1
                blocksCaughtUp += Int(missed)
            } else {
                gaps += 1
                programme.restartAudioTimeline()
            }
            logger.debug(
                "audio clock skipped ticks",
                metadata: [
                    "room": "\(room)", "ticks": "\(missed)",
                    "caughtUp": "\(first < index)",
                ])
        }
        lastTick = index
        for tick in first...index {
            mixBlock(tick: tick, nowMs: now, catchingUp: first < index)
            meter(nowMs: now)
        }
    }

    /// Levels every 10 blocks (event + FLV message), `active_speaker` when it changes. Counted in blocks, not ticks,
    /// so after a tick that caught up the reports stay on the programme's 200 ms grid.
    private func meter(nowMs now: Int64) {
        let (report, changed) = voice.endBlock(present: present, nowMs: now)
        if let changed { events.publish(.activeSpeaker(userId: changed)) }
        // An empty room has no levels to tell: it sends nothing (and costs nothing here).
        guard report, !present.isEmpty else { return }
        programme.sendVoiceLevels(voice.levels, activeSpeaker: voice.activeSpeaker)
        // Nobody listening: skip building the JSON.
        if events.hasListeners {
            events.publish(
                .voiceLevels(
                    voice.levels.map { VoiceLevel(userId: $0.userId, level: $0.level) },
                    activeSpeaker: voice.activeSpeaker))
        }
        published.store(voice.levels, activeSpeaker: voice.activeSpeaker)
    }

    /// Ends the tick: no participant is kept past it (the storage is).
    func endTick() {
        present.removeAll(keepingCapacity: true)
        viewers.removeAll(keepingCapacity: true)
    }

    /// The room parked: the ticks after it wakes are no skipped ones.
    func forgetLastTick() { lastTick = nil }

    /// Whether the user's last 100 ms window was loud enough to light a placeholder's speaking indicator.
    func isSpeaking(_ userId: String) -> Bool { voice.isSpeaking(userId) }

    /// One 20 ms block of every voice, mixed and encoded as the block of `tick`, and each listener's mix-minus.
    private func mixBlock(tick: Int64, nowMs now: Int64, catchingUp: Bool) {
        mixInputs.removeAll(keepingCapacity: true)
        voices.removeAll(keepingCapacity: true)
        var listening = !viewers.isEmpty
        for i in present.indices {
            let p = present[i]
            let (ok, gain) = p.pullAudio(into: &inputBlocks[i], nowMs: now, catchingUp: catchingUp)
            voices.append((ok, gain))
            if p.returnAudio != nil { listening = true }
            if ok {
                mixInputs.append(MixInput(samples: inputBlocks[i], gain: gain))
                voice.add(userId: p.userId, block: inputBlocks[i], gain: gain, nowMs: now)
            } else {
                voice.addSilence(userId: p.userId, nowMs: now)
            }
        }
        // The mix goes to the outputs and the listeners (the meters take each voice alone): with neither, nothing
        // is mixed.
        let limiterBefore = mixer.limiter
        if programme.hasOutputs || listening {
            MixMinus.sum(mixInputs, into: &sum)
            mixBlock.withUnsafeMutableBufferPointer { dst in
                sum.withUnsafeBufferPointer { src in _ = dst.update(fromContentsOf: src) }
            }
            mixer.limit(&mixBlock)
        }
        programme.encodeAudio(mixBlock, tick: tick)
        if listening {
            mixMinus.send(
                tick: tick, present: present, blocks: inputBlocks, voices: voices, sum: sum, programme: mixBlock,
                limiterBefore: limiterBefore, reportDue: tick % 50 == 0, nowMs: now)
        }
        if !viewers.isEmpty {
            mixMinus.sendShared(tick: tick, to: viewers, programme: mixBlock, reportDue: tick % 50 == 0)
        }
    }

    /// Encodes made for the return audio: shared (one per room and channel count) and per talker.
    var returnEncodes: (shared: Int, own: Int) { (mixMinus.sharedEncodes, mixMinus.ownEncodes) }
    func sharedLossPercent(channels: Int) -> Int { mixMinus.sharedLossPercent(channels: channels) }
}
