import Foundation
import Dispatch
import Media
import Mixing
import Codecs
import Publishing
import Logging
import RTP

/// One room: its participants, layout, mixer and programme.
///
/// Two kinds of work touch a room. Control calls (join, leave, layout, outputs) arrive from HTTP
/// handlers and take `lock` for the participant table. Media work runs on `queue`, a serial queue
/// fed by the shared `MixClock`: a video tick composes and encodes one canvas, an audio tick
/// mixes and encodes 20 ms. A video tick that finds the previous one still running is skipped
/// (counted), so a slow encoder lowers the frame rate instead of piling up work. No audio block is
/// skipped: when the clock itself fell behind and skipped ticks, the next tick mixes their blocks too.
public final class Room: @unchecked Sendable {
    public let name: String
    public let config: RoomConfig
    public let events: EventHub
    public let createdAt = Date()
    let queue: DispatchQueue
    let logger: Logger

    let lock = NSLock()
    private let patchLock = NSLock()
    var members: [String: Participant] = [:]
    var joinOrder: [String] = []
    var layout: Layout
    /// Bumped (under `lock`) whenever the layout, the participants or the anchor change: what placements depend on.
    var placementInputsVersion: UInt64 = 0
    private var closed = false
    /// The room's anchor and pictures, as created and then patched (under `lock`).
    private var anchor: String?
    private var images: RoomImages

    // Confined to `queue`. (What the canvas and audio ticks in Room+Canvas.swift and Room+Audio.swift use is internal
    // rather than private, for those files' sake; the confinement and locking said here hold all the same.)
    var compositor: VideoCompositor?
    var mixer = AudioMixer()
    var mixBlock = [Float](repeating: 0, count: AudioFormat.blockFrames * 2)
    var inputBlocks: [[Float]] = []
    var mixInputs: [MixInput] = []
    /// One participant's RTCP feedback at a time, and its SRTCP form: reused (the audio tick's).
    var feedbackBytes: [UInt8] = []
    var protectedFeedback: [UInt8] = []
    /// The participants of the current audio tick, in join order (storage reused between ticks).
    var tickParticipants: [Participant] = []
    /// The last audio tick handled (nil before the first, and while parked).
    var lastAudioTick: Int64?
    /// Audio blocks of ticks the clock skipped, mixed late by the tick after; and skips too long to make up.
    var audioBlocksCaughtUp = 0
    var audioGaps = 0
    /// The most blocks one tick makes up for (a voice's FIFO holds at most 10): past that the programme's
    /// sound restarts at the tick's time, leaving a gap, rather than mix a burst of stale audio.
    static let maxCatchUpBlocks: Int64 = 10
    var tiles: [Tile] = []
    /// The placements of `placedVersion` of the layout inputs (confined to `queue`; nil version: none yet).
    var placements: [Placement] = []
    var placedVersion: UInt64?
    /// When canvases are composed and how far ahead of that they are stamped.
    var canvasTiming: CanvasTiming
    /// The video tick's schedule, for `MixClock.shift` (under `lock`: set by `start`, read by a tick).
    var videoToken: MixClock.Token?
    var voice = VoiceActivity()
    /// Users who left since the last audio tick (their meters go on the room queue).
    let departedVoices = DepartedList()
    /// The last reported levels, for GET room.
    let publishedVoice = PublishedVoiceReport()
    /// Who was kicked, and when: their older tokens no longer admit them.
    let kicks = KickList()
    let programme: Programme

    var clock: MixClock?
    /// Guarded by `lock`: read when the room parks (a tick) or wakes (a join, an output), emptied by `close`.
    var clockTokens: [MixClock.Token] = []
    /// Kept for the room's lifetime (a relay that goes away cancels its pending ticks).
    private var relays: [TickRelay] = []
    private let videoTickPending = ManagedFlag()
    /// Set by an audio tick that found nobody in the room and no output; the room's schedules are then parked
    /// in the clock, which calls no handler of them (an idle room wakes no thread, not even the clock's) until a
    /// join or an output clears it.
    /// Set under `lock` on `queue`; cleared under `lock` (joins) or on `queue` (outputs), so never both at once.
    let ticksParked = ManagedFlag()
    /// The canvas may not show what is configured (no tick composed it since the room started, since its
    /// pictures changed, or since it went idle): a snapshot composes it first.
    var canvasStale = true
    /// How long a stalled participant's last picture stays before the placeholder replaces it.
    var holdMs: Int64 { Int64(config.canvas.holdMs) }

    let serverSSRC: UInt32
    /// Sends one compound RTCP datagram, with a buffer for its SRTCP form. Both are the room's, reused: keeping
    /// them past the call is safe but makes the next tick reallocate.
    typealias FeedbackSender = @Sendable (Participant, [UInt8], inout [UInt8]) -> Void
    let sendFeedback: FeedbackSender

    init(config: RoomConfig, serverSSRC: UInt32, logger: Logger, sendFeedback: @escaping FeedbackSender) throws {
        self.serverSSRC = serverSSRC
        self.sendFeedback = sendFeedback
        name = config.name
        self.config = config
        self.logger = logger
        events = EventHub(room: config.name)
        layout = config.layout
        anchor = config.anchor
        images = config.images
        canvasTiming = CanvasTiming(fps: config.canvas.fps, logger: logger, room: config.name)
        // On the global (non-overcommit) pool, which runs as many threads as there are cores: a serial queue
        // of its own targets the overcommit pool, where every room with a tick pending got a thread of its
        // own; at 50 voice rooms that was 50 runnable threads on 2 cores, and the context switches cost more
        // CPU than the rooms' work (the voice-room benchmark fell off a cliff between 45 and 50 rooms).
        queue = DispatchQueue(label: "cohost.room.\(config.name)", qos: .userInteractive,
                              target: .global(qos: .userInteractive))
        let hub = events
        programme = try Programme(config: config, logger: logger) { id, url, change in
            // Events reach participants too: never the whole stream key.
            hub.publish(.outputState(output: id, url: redactedURL(url), state: change.state.rawValue,
                                     attempt: change.attempt, error: change.message))
        }
        if !config.audioOnly {
            var compositor = VideoCompositor(width: config.canvas.width, height: config.canvas.height,
                                             background: config.backgroundColor, placeholder: config.placeholderColor)
            config.images.apply(to: &compositor)
            self.compositor = compositor
        }
    }

    /// Starts the outputs of the config and registers the ticks with the shared clock.
    func start(clock: MixClock) throws(RoomError) {
        self.clock = clock
        for spec in config.outputs { _ = try startOutput(spec) }
        // Ticks reach the queue through relays, not `queue.async` (hot path: no allocation per tick).
        let audioRelay = TickRelay(queue: queue) { [weak self] tick in self?.audioTick(tick) }
        relays.append(audioRelay)
        // Audio and video count from one instant: their timestamps (tick × interval) must mean the same time.
        let audioInterval = UInt64(AudioFormat.blockMilliseconds) * 1_000_000
        let start = MixClock.nextAlignedInstant(interval: audioInterval)
        let audioToken = clock.schedule(intervalNanoseconds: audioInterval, start: start) { tick in
            audioRelay.post(tick)
        }
        lock.withLock { clockTokens.append(audioToken) }
        if !config.audioOnly {
            let interval = 1_000_000_000 / UInt64(config.canvas.fps)
            let pending = videoTickPending
            let videoRelay = TickRelay(queue: queue) { [weak self] tick in
                self?.videoTick(tick)
                pending.clear()
            }
            relays.append(videoRelay)
            let videoToken = clock.schedule(intervalNanoseconds: interval, start: start) { tick in
                // Skipped when the previous canvas is still being made: lower fps, no backlog.
                guard pending.setIfClear() else { return }
                videoRelay.post(tick)
            }
            lock.withLock {
                clockTokens.append(videoToken)
                self.videoToken = videoToken
            }
        }
    }

    // MARK: participants

    var participants: [Participant] { lock.withLock { joinOrder.compactMap { members[$0] } } }

    /// Participants silent for longer than `ms`, in join order. Allocates only when there are some: the sweep asks
    /// every room once a second. (Reads each participant's packet time under the room's lock; that time has a lock
    /// of its own, held for nothing else, so the sweep never waits here for a participant's decode.)
    func participants(idleLongerThan ms: Int64, nowMs: Int64) -> [Participant] {
        lock.withLock {
            var idle: [Participant] = []
            for id in joinOrder {
                if let p = members[id], p.idleMilliseconds(nowMs: nowMs) > ms { idle.append(p) }
            }
            return idle
        }
    }

    /// Every participant's per-stream statistics, in join order (for metrics).
    public func streamReports() -> [(userId: String, streams: [StreamReport])] {
        participants.map { ($0.userId, $0.reports()) }
    }
    public var participantCount: Int { lock.withLock { members.count } }
    func participant(_ userId: String) -> Participant? { lock.withLock { members[userId] } }

    /// Adds a participant, returning the one it replaces (same user id), if any.
    func add(_ participant: Participant) throws(RoomError) -> Participant? {
        lock.lock()
        defer { lock.unlock() }
        guard !closed else { throw .notFound("room '\(name)' is closed") }
        let previous = members[participant.userId]
        if previous == nil && members.count >= config.maxParticipants {
            throw .conflict("room_full", "room '\(name)' is full (\(config.maxParticipants) participants)")
        }
        members[participant.userId] = participant
        placementInputsVersion &+= 1
        if previous == nil { joinOrder.append(participant.userId) }
        wakeLocked()
        return previous
    }

    func remove(_ userId: String, ifSession session: Int? = nil) -> Participant? {
        lock.lock()
        defer { lock.unlock() }
        guard let p = members[userId], session == nil || p.sessionID == session else { return nil }
        members[userId] = nil
        placementInputsVersion &+= 1
        joinOrder.removeAll { $0 == userId }
        departedVoices.append(userId)
        return p
    }

    public var currentLayout: Layout { lock.withLock { layout } }

    /// Who a pip layout without its own `anchor` puts full-canvas: the room's `anchor`, else the first
    /// admin present (in join order). Called under `lock`.
    var anchorCandidate: String? {
        if let anchor, members[anchor] != nil { return anchor }
        return joinOrder.first { members[$0]?.isAdmin == true }
    }

    /// The user a pip layout shows full-canvas now (nil for other layouts or an empty room).
    public var effectiveAnchor: String? {
        lock.withLock {
            guard layout.mode == .pip else { return nil }
            return LayoutEngine.effectiveAnchor(for: layout, participants: joinOrder, anchor: anchorCandidate)
        }
    }

    /// The room's anchor and pictures now.
    public var appearance: (anchor: String?, images: RoomImages) { lock.withLock { (anchor, images) } }

    /// Changes the anchor and pictures; the compositor takes them at the next frame boundary.
    public func apply(_ patch: RoomPatch) throws(RoomError) {
        if config.audioOnly, patch.touchesImages {
            throw .conflict("audio_only", "room '\(name)' is audio-only: it has no canvas for images")
        }
        // One patch at a time (decoding pictures is slow, so not under `lock`): two concurrent patches of
        // different pictures must not undo each other.
        patchLock.lock()
        defer { patchLock.unlock() }
        let (currentAnchor, currentImages) = appearance
        let (newAnchor, newImages) = try patch.resolve(anchor: currentAnchor, images: currentImages,
                                                       canvasWidth: config.canvas.width, canvasHeight: config.canvas.height)
        lock.withLock { anchor = newAnchor; images = newImages; placementInputsVersion &+= 1 }
        // Whatever is current when the queue gets to it, so the canvas always ends as GET reports.
        queue.async {
            let current = self.lock.withLock { self.images }
            guard self.compositor != nil else { return }
            current.apply(to: &self.compositor!)
            self.canvasStale = true
        }
    }

    /// The last `voice_levels` report: each participant's level and the active speaker.
    public var voiceReport: (levels: [String: Int], activeSpeaker: String?) {
        publishedVoice.report
    }

    /// Replaces the layout; the next video tick uses it whole (no half-applied frame).
    public func applyLayout(_ newLayout: Layout) throws(RoomError) {
        do { try newLayout.validate(canvasWidth: config.canvas.width, canvasHeight: config.canvas.height) } catch {
            throw .badRequest("invalid_layout", error.message)
        }
        lock.withLock { layout = newLayout; placementInputsVersion &+= 1 }
    }

    // MARK: outputs

    /// Starts an output with its options (already validated by `OutputRequest.resolve`).
    public func startOutput(_ spec: OutputSpec) throws(RoomError) -> RoomInfo.OutputInfo {
        let result: Result<RoomInfo.OutputInfo, RoomError> = queue.sync {
            Result { () throws(RoomError) in
                defer { wake() }
                return try programme.addOutput(spec, nowMs: Clock.nowMs())
            }
        }
        return try result.get()
    }

    /// Starts an output with the default options.
    public func startOutput(url: String) throws(RoomError) -> RoomInfo.OutputInfo {
        try startOutput(OutputSpec(url: url))
    }

    public func stopOutput(id: String) -> Bool { queue.sync { programme.removeOutput(id: id) } }
    public var outputs: [RoomInfo.OutputInfo] { queue.sync { programme.outputInfos } }

    // MARK: ticks (on `queue`)

    /// Whether the clock has stopped posting ticks to this idle room (tests).
    var ticksAreParked: Bool { ticksParked.isSet }

    /// Video and AAC frames the programme has encoded (tests: an idle room encodes none).
    var encodedFrames: (video: Int, audio: Int) { queue.sync { (programme.videoFramesEncoded, programme.audioFramesEncoded) } }

    /// Unparks the room's schedules if they were parked.
    private func wake() { lock.withLock { wakeLocked() } }

    /// `wake` for callers already holding `lock` (which guards `clockTokens`; the clock's own lock nests inside it,
    /// as when a tick parks the room).
    private func wakeLocked() {
        if ticksParked.take() { clock?.unpark(clockTokens) }
    }

    /// Nobody is left to draw: the tiles of the last canvas go (a snapshot must not show them) and the canvas is
    /// composed only when a snapshot asks. On `queue`.
    func goIdle() {
        tiles.removeAll(keepingCapacity: true)
        canvasStale = true
    }

    // MARK: closing

    /// Stops the clock, flushes and stops outputs; returns the participants that were present.
    func close() -> [Participant] {
        let present: [Participant] = lock.withLock {
            closed = true
            let list = joinOrder.compactMap { members[$0] }
            members.removeAll(); joinOrder.removeAll()
            return list
        }
        let tokens: [MixClock.Token] = lock.withLock { defer { clockTokens.removeAll() }; return clockTokens }
        for token in tokens { clock?.cancel(token) }
        // The relays stay: a tick already posted still runs before the stop below, as it did through `queue.async`.
        queue.sync { programme.stop() }
        return present
    }

    var isClosed: Bool { lock.withLock { closed } }
}
