import Foundation
import Dispatch
import Media
import Logging
import Publishing
import Layout
import Clocks
import CohostAPI
import Forwarding
import Codecs

/// One room: a façade that wires the room's owners together.
///
/// - `Roster` (lock-guarded): members, layout, anchor, pictures. Control calls use it from any thread.
/// - `AudioPipeline` and `CanvasPipeline` (confined to `queue`): the 20 ms mix and the canvas.
/// - `FeedbackScheduler` (confined to `queue`): RTCP to the senders each audio tick.
/// - `TickSchedule`: the room's schedules on the shared `MixClock`, and parking.
/// - `ProgrammeFeed` (confined to `queue`): the encoders and the outputs.
public final class Room: @unchecked Sendable {
    public let name: String
    public let config: RoomConfig
    public let events: EventHub
    public let createdAt = Date()
    let queue: DispatchQueue
    private let roster: Roster
    private let schedule: TickSchedule
    private let programme: ProgrammeFeed
    private let audio: AudioPipeline
    private let canvas: CanvasPipeline?
    private let feedback: FeedbackScheduler
    /// The receive slots: other participants' videos forwarded (nil in audio-only rooms).
    private let director: SlotDirector?
    /// One patch at a time (decoding pictures is slow, so not under the roster's lock): two concurrent patches of
    /// different pictures must not undo each other.
    private let patchLock = NSLock()
    /// The room's pulled and pushed sources, whether their participant has joined yet or not.
    let sources = SourceTable()
    /// The HLS output's stream, for the HTTP layer without a trip through `queue` per request.
    private let hlsLock = NSLock()
    private var servedHLS: HLSStream?
    /// Participants' own tracks being recorded.
    let recordings: ParticipantRecordings
    /// Sources running now (not ended or failed).
    public var sourceCount: Int { sources.runningCount }
    /// Called after the layout, anchor, pictures or outputs changed, off the room's queue (the manager stores the
    /// definition). Set once, before the room is shared.
    var onDefinitionChange: (@Sendable (Room) -> Void)?

    init(
        config: RoomConfig, serverSSRC: UInt32, logger: Logger, outputRules: OutputRules = OutputRules(),
        sendFeedback: @escaping FeedbackScheduler.Sender,
        sendReturn: @escaping MixMinusSender.Transport = { _, _, _ in }
    ) throws {
        name = config.name
        self.config = config
        let events = EventHub(room: config.name)
        self.events = events
        // On the global (non-overcommit) pool, which runs as many threads as there are cores: on the overcommit
        // pool every room with a tick pending got a thread of its own, and at 50 voice rooms on 2 cores the
        // context switches cost more than the rooms' work.
        queue = DispatchQueue(
            label: "cohost.room.\(config.name)", qos: .userInteractive,
            target: .global(qos: .userInteractive))
        roster = Roster(config: config)
        recordings = ParticipantRecordings(
            room: config.name, directory: outputRules.recordings, events: events, logger: logger)
        schedule = TickSchedule(queue: queue)
        programme = try ProgrammeFeed(config: config, logger: logger, outputRules: outputRules) { id, url, change in
            // Events reach participants too: never the whole stream key.
            events.publish(
                .outputState(
                    output: id, url: redactedURL(url), state: change.state.rawValue,
                    attempt: change.attempt, error: change.message))
        }
        audio = AudioPipeline(
            room: config.name, programme: programme, events: events, logger: logger, returnTransport: sendReturn)
        canvas =
            !config.hasPicture
            ? nil
            : CanvasPipeline(
                config: config, roster: roster, programme: programme,
                audio: audio, schedule: schedule, logger: logger, returnTransport: sendReturn)
        feedback = FeedbackScheduler(serverSSRC: serverSSRC, send: sendFeedback)
        director =
            config.audioOnly
            ? nil
            : SlotDirector(events: events) { participant, bytes in
                sendReturn(participant, .video, bytes)
            }
    }

    /// Starts the outputs of the config and registers the ticks with the shared clock.
    func start(clock: MixClock) throws(RoomError) {
        for spec in config.outputs { _ = try startOutput(spec) }
        schedule.start(
            clock: clock, videoFps: config.hasPicture ? config.canvas.fps : nil,
            audio: { [weak self] tick in self?.audioTick(tick) },
            video: { [weak self] tick in self?.canvas?.tick(tick) })
    }

    // MARK: participants

    var participants: [Participant] { roster.participants }
    func participants(idleLongerThan ms: Int64, nowMs: Int64) -> [Participant] {
        roster.participants(idleLongerThan: ms, nowMs: nowMs)
    }
    public var participantCount: Int { roster.count }
    func participant(_ userId: String) -> Participant? { roster.participant(userId) }
    /// The hidden receiver of that user id (an admin's monitor join), if any.
    func monitor(_ userId: String) -> Participant? { roster.monitor(userId) }

    /// Every participant's per-stream statistics, in join order (for metrics).
    public func streamReports() -> [(userId: String, streams: [StreamReport])] {
        participants.map { ($0.userId, $0.reports()) }
    }

    /// Every participant's return streams (what Cohost sends it), in join order (for metrics).
    public func returnReports() -> [(userId: String, streams: [ReturnReport])] {
        participants.map { ($0.userId, $0.returnReports()) }
    }

    /// Every participant's receive slots, in join order (for metrics).
    public func slotReports() -> [(userId: String, slots: [SlotInfo])] {
        participants.filter { !$0.slots.isEmpty }.map { ($0.userId, $0.slots.map(SlotInfo.init)) }
    }

    /// Adds a participant, returning the one it replaces (same user id), if any. Wakes a parked room.
    func add(_ participant: Participant) throws(RoomError) -> Participant? {
        defer { director?.invalidate() }
        let replaced = try roster.add(participant) { schedule.wake() }
        replaced?.detachSlots()
        if let replaced { recordings.stop(userId: replaced.userId, reason: "left") }
        return replaced
    }

    func remove(_ userId: String, ifSession session: Int? = nil) -> Participant? {
        let removed = roster.remove(userId, ifSession: session)
        removed?.detachSlots()
        if let removed { recordings.stop(userId: removed.userId, reason: "left") }
        director?.invalidate()
        return removed
    }

    // MARK: forwarding

    /// What `userId`'s slots show now, and its own choices.
    public func slots(
        of userId: String
    ) throws(RoomError) -> (
        slots: [SlotAssignment], chosen: [String: StreamKey], sizes: [String: SlotSize]
    ) {
        guard let p = roster.memberOrMonitor(userId) else {
            throw .notFound("no participant '\(userId)' in room '\(name)'")
        }
        return (p.slots.map { SlotAssignment(mid: $0.mid, shown: $0.shown) }, p.subscriptions, p.slotSizes)
    }

    /// Replaces `userId`'s own choices: the slots named show what they name, the others are filled automatically;
    /// the slots follow at the next tick.
    public func subscribe(
        _ userId: String, _ changes: [String: StreamKey], sizes: [String: SlotSize] = [:]
    ) throws(RoomError) {
        guard let p = roster.memberOrMonitor(userId) else {
            throw .notFound("no participant '\(userId)' in room '\(name)'")
        }
        for mid in Set(changes.keys).union(sizes.keys) where !p.slots.contains(where: { $0.mid == mid }) {
            throw .badRequest(
                "unknown_slot",
                p.slots.isEmpty
                    ? "'\(userId)' has no receive slots (recvonly video lines in its offer)"
                    : "'\(userId)' has no slot with mid '\(mid)' (its slots: \(p.slots.map(\.mid).joined(separator: ", ")))"
            )
        }
        p.choose(changes, sizes: sizes)
        director?.invalidate()
    }

    /// A participant's camera or microphone on or off: announced, and the slots follow.
    public func setDevices(_ userId: String, camera: Bool?, microphone: Bool?) throws(RoomError) {
        guard let p = participant(userId) else { throw .notFound("no participant '\(userId)' in room '\(name)'") }
        guard p.setDevices(camera: camera, microphone: microphone) else { return }
        director?.invalidate()
        events.publish(.participantUpdated(userId: userId, camera: p.cameraOn, microphone: p.microphoneOn))
    }

    // MARK: layout and appearance

    public var currentLayout: Layout { roster.currentLayout }
    /// The user a pip layout shows full-canvas now (nil for other layouts or an empty room).
    public var effectiveAnchor: String? { roster.effectiveAnchor }
    /// The room's anchor and pictures now.
    public var appearance: (anchor: String?, images: RoomImages) { roster.appearance }
    /// The last `voice_levels` report: each participant's level and the active speaker.
    public var voiceReport: (levels: [String: Int], activeSpeaker: String?) { audio.published.report }

    /// Replaces the layout; the next video tick uses it whole (no half-applied frame).
    public func applyLayout(_ newLayout: Layout) throws(RoomError) {
        // A canvas patch refits the layout under this lock: a layout checked against the old canvas must not land
        // after it.
        patchLock.lock()
        defer { patchLock.unlock() }
        try setLayout(newLayout)
    }

    /// `applyLayout` with `patchLock` held.
    private func setLayout(_ newLayout: Layout) throws(RoomError) {
        let canvas = roster.currentCanvas
        do { try newLayout.validate(canvasWidth: canvas.width, canvasHeight: canvas.height) } catch {
            throw .badRequest("invalid_layout", error.message)
        }
        try RoomLimits.checkLabelsDrawable(newLayout)
        roster.setLayout(newLayout)
        // The slots follow the layout's order.
        director?.invalidate()
        onDefinitionChange?(self)
    }

    /// Changes the anchor, pictures and canvas; the compositor takes them at the next frame boundary.
    public func apply(_ patch: RoomPatch) throws(RoomError) {
        if !config.hasPicture, patch.touchesImages || patch.canvas != nil || patch.layout != nil {
            throw .conflict("audio_only", "room '\(name)' is audio-only: it has no canvas")
        }
        patchLock.lock()
        defer { patchLock.unlock() }
        let (currentAnchor, currentImages) = roster.appearance
        let oldCanvas = roster.currentCanvas
        let newCanvas = try patch.canvas.map { change throws(RoomError) in try resized(oldCanvas, by: change) }
        let target = newCanvas ?? oldCanvas
        let (newAnchor, newImages) = try patch.resolve(
            anchor: currentAnchor, images: currentImages, canvasWidth: target.width, canvasHeight: target.height)
        if let newCanvas {
            let layout =
                patch.layout
                ?? roster.currentLayout.refitted(
                    fromWidth: oldCanvas.width, fromHeight: oldCanvas.height, toWidth: newCanvas.width,
                    toHeight: newCanvas.height)
            var candidate = definition
            candidate.canvas = newCanvas
            candidate.layout = layout
            candidate.anchor = newAnchor
            try RoomLimits.check(candidate)
            try RoomLimits.checkLabelsDrawable(layout)
            if let mark = newImages.watermark,
                mark.rect.intersection(Rect(x: 0, y: 0, width: newCanvas.width, height: newCanvas.height)).isEmpty
            {
                throw .badRequest(
                    "invalid_image",
                    "the watermark at (\(mark.rect.x),\(mark.rect.y)) is off the \(newCanvas.width)x\(newCanvas.height) "
                        + "canvas: move it in the same patch")
            }
            // x264 refusing the size is an answer here, not a log line at every frame after.
            do { _ = try H264Encoder(config: candidate.h264Config) } catch {
                throw .badRequest(
                    "invalid_canvas", "the encoder refuses a \(newCanvas.width)x\(newCanvas.height) canvas: \(error)")
            }
            // Checked and set on the room's queue, where outputs are added: none can start between the two with a
            // container that fixes the old size.
            let set: Result<Void, RoomError> = queue.sync {
                Result { () throws(RoomError) in
                    if newCanvas.width != oldCanvas.width || newCanvas.height != oldCanvas.height {
                        try refuseFixedSizeOutputs()
                    }
                    roster.setCanvas(newCanvas, layout: layout, images: newImages)
                }
            }
            try set.get()
            roster.setAppearance(anchor: newAnchor, images: newImages)
            director?.invalidate()
        } else {
            if let layout = patch.layout { try setLayout(layout) }
            roster.setAppearance(anchor: newAnchor, images: newImages)
        }
        // Whatever is current when the queue gets to it, so the canvas always ends as GET reports.
        queue.async { self.canvas?.apply(self.roster.currentImages) }
        onDefinitionChange?(self)
    }

    /// The canvas `change` asks for, when this room can take it while running: its size, background and placeholder
    /// may change; its frame rate (the clock every tick and timestamp counts in) may not, nor the size under an
    /// output whose container fixes the picture size when it starts (HLS, MP4, MPEG-TS over SRT or in a file).
    private func resized(_ current: RoomConfig.Canvas, by change: CanvasPatch) throws(RoomError) -> RoomConfig.Canvas {
        if let fps = change.fps, fps != current.fps {
            throw .conflict(
                "canvas_fixed",
                "a running room's frame rate cannot change (\(current.fps) fps): close room '\(name)' "
                    + "and create it with the new rate")
        }
        var canvas = current
        canvas.width = change.width ?? current.width
        canvas.height = change.height ?? current.height
        canvas.background = change.background ?? current.background
        canvas.placeholder = change.placeholder ?? current.placeholder
        if canvas.width != current.width || canvas.height != current.height {
            try queue.sync { () -> Result<Void, RoomError> in
                Result { () throws(RoomError) in try refuseFixedSizeOutputs() }
            }
            .get()
        }
        return canvas
    }

    /// 409 `canvas_fixed` naming an output that cannot change its picture size. On the room's queue.
    private func refuseFixedSizeOutputs() throws(RoomError) {
        let fixes = { (output: OutputSpec) in output.hls != nil || !PictureSizeChange.isCarried(byOutputAt: output.url)
        }
        guard let fixed = programme.outputSpecs.first(where: fixes) else { return }
        throw .conflict(
            "canvas_fixed",
            "output \(redactedURL(fixed.url)) cannot change its picture size while it runs: remove it, or close the "
                + "room and create it with the new canvas")
    }

    /// The room as it is now: its configuration with the current layout, anchor, pictures and outputs. Not on the
    /// room's queue.
    public var definition: RoomConfig {
        var current = config
        current.canvas = roster.currentCanvas
        current.layout = roster.currentLayout
        (current.anchor, current.images) = roster.appearance
        current.outputs = queue.sync { programme.outputSpecs }
        return current
    }

    /// The canvas now (its size, colours and rate), as `PATCH` may have changed it.
    public var currentCanvas: RoomConfig.Canvas { roster.currentCanvas }

    /// The current canvas (a copy), for snapshots; nil for audio-only rooms.
    var canvasSnapshot: VideoFrame? { queue.sync { canvas?.snapshot } }

    // MARK: outputs

    /// Starts an output with its options (already validated by `OutputRequest.resolve`). Wakes a parked room.
    public func startOutput(_ spec: OutputSpec) throws(RoomError) -> OutputInfo {
        let result: Result<OutputInfo, RoomError> = queue.sync {
            Result { () throws(RoomError) in
                defer { schedule.wake() }
                // A canvas patched while no tick ran (an idle room) is taken now: the output starts at its size.
                canvas?.takeCanvas(roster.currentCanvas)
                let info = try programme.addOutput(spec, nowMs: MonotonicClock.nowMs())
                let stream = programme.hlsStream
                hlsLock.withLock { servedHLS = stream }
                return info
            }
        }
        let info = try result.get()
        onDefinitionChange?(self)
        return info
    }

    /// Starts an output with the default options.
    public func startOutput(url: String) throws(RoomError) -> OutputInfo {
        try startOutput(OutputSpec(url: url))
    }

    public func stopOutput(id: String) -> Bool {
        let removed = queue.sync {
            let removed = programme.removeOutput(id: id)
            let stream = programme.hlsStream
            hlsLock.withLock { servedHLS = stream }
            return removed
        }
        guard removed else { return false }
        onDefinitionChange?(self)
        return true
    }
    public var outputs: [OutputInfo] { queue.sync { programme.outputInfos } }

    // MARK: recordings of participants

    /// Records `userId`'s `source` ("camera" or "screen") as received.
    public func startRecording(userId: String, source: String) throws(RoomError) -> RecordingInfo {
        guard let participant = roster.participant(userId) else {
            throw .notFound("no participant '\(userId)' in room '\(name)'")
        }
        return try recordings.start(participant, source: source)
    }

    /// Stops a recording and waits for its file; false when there is none with that id.
    public func stopRecording(id: String) -> Bool { recordings.stop(id: id, reason: "stopped") }

    public var recordingInfos: [RecordingInfo] { recordings.infos }

    /// WHEP viewers watching now.
    public var viewerCount: Int { roster.viewerCount }
    /// The programme's pictures as a profile-level-id, nil in an audio-only room.
    var programmeProfileLevelId: String? { queue.sync { programme.profileLevelId } }

    /// What the room's HLS output serves; nil without one.
    public var hlsStream: HLSStream? { hlsLock.withLock { servedHLS } }

    // MARK: the audio tick (on `queue`)

    /// Every 20 ms: packets whose reordering wait expired are released, RTCP goes out, the block of tick `index`
    /// (and of ticks the clock skipped) is mixed, meters and outputs advance, and a room left with nobody and no
    /// output parks its schedules. `now` is injected by tests.
    func audioTick(_ index: Int64, nowMs now: Int64 = MonotonicClock.nowMs()) {
        director?.takeChanges()
        audio.gather(from: roster)
        let watched = roster.hasViewers
        programme.watched = watched
        for p in audio.present {
            if case .firstVideoFrame(let w, let h)? = p.drain(nowMs: now) {
                events.publish(.firstVideoFrame(userId: p.userId, width: w, height: h))
            }
        }
        feedback.tick(index, participants: audio.present, nowMs: now)
        audio.mix(tick: index, nowMs: now, departed: roster.departed.take())
        director?.tick(
            present: audio.present, roster: roster, activeSpeaker: audio.activeSpeaker, nowMs: now)
        for (output, status) in programme.outputTick(nowMs: now) {
            events.publish(
                .outputStatus(
                    output: output.id, url: redactedURL(output.url), status: status,
                    bitrate: programme.currentBitrateKbps))
        }
        if !programme.hasOutputs, !watched, roster.ifEmpty({ schedule.park() }) {
            audio.forgetLastTick()
            feedback.forgetLastTick()
            canvas?.goIdle()
        }
        audio.endTick()
    }

    // MARK: state for tests and metrics

    /// Whether the clock has stopped posting ticks to this idle room.
    var ticksAreParked: Bool { schedule.isParked }
    /// Video and AAC frames the programme has encoded (an idle room encodes none).
    var encodedFrames: (video: Int, audio: Int) {
        queue.sync { (programme.videoFramesEncoded, programme.audioFramesEncoded) }
    }
    /// Audio blocks of skipped ticks mixed late, and skips too long to make up (on `queue`).
    var audioBlocksCaughtUp: Int { audio.blocksCaughtUp }
    var audioGaps: Int { audio.gaps }
    /// Return audio encodes so far: the room's shared ones and the talkers' own (on `queue`).
    var returnEncodes: (shared: Int, own: Int) { queue.sync { audio.returnEncodes } }
    /// Room view frames encoded so far, per codec.
    /// The canvas's CPU time in its last whole second, by stage (nil for an audio-only room).
    public var canvasCPU: StageCPU.Second? { canvas?.stageCPU.lastSecond(nowMs: MonotonicClock.nowMs()) }

    var viewFrames: (vp8: Int, h264: Int) { queue.sync { canvas?.viewFrames ?? (0, 0) } }
    /// The loss protection of the room's shared return encoder for `channels` (on `queue`).
    func sharedLossPercent(channels: Int) -> Int { audio.sharedLossPercent(channels: channels) }

    // MARK: closing

    /// Stops the clock, flushes and stops outputs; returns the participants that were present.
    func close() -> [Participant] {
        // Before room_closed, which is the room's last event.
        recordings.stopAll(reason: "room_closed")
        for source in sources.removeAll() { source.stop() }
        let present = roster.close()
        schedule.cancel()
        // The relays stay: a tick already posted still runs before the stop below.
        hlsLock.withLock { servedHLS = nil }
        queue.sync { programme.stop() }
        return present
    }

    var isClosed: Bool { roster.isClosed }
}
