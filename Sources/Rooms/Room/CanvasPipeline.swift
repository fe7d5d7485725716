import Logging
import Media
import Compositing
import Playout
import Layout
import Clocks

/// A room's picture: on every video tick it places the layout when it changed, takes each tile's picture, composes
/// the canvas and hands it to the programme, and lets `CanvasTiming` stamp the canvas and move the canvas clock.
/// Confined to the room's queue.
final class CanvasPipeline {
    private let config: RoomConfig
    private let roster: Roster
    private let programme: ProgrammeFeed
    private let audio: AudioPipeline
    private let schedule: TickSchedule
    private let logger: Logger
    private var compositor: VideoCompositor
    private var tiles: [Tile] = []
    /// The placements of `placedVersion` of the roster's placement inputs (nil version: none yet).
    private var placements: [Placement] = []
    /// Each placement's label, rendered when the placements change, and its card, rendered the first time the tile
    /// has no picture (`cardMade`); never per frame.
    private var labels: [(label: TileLabel?, card: TileLabel?, cardMade: Bool)] = []
    let roomLabels = RoomLabels()
    private var placedVersion: UInt64?
    private var timing: CanvasTiming
    /// The canvas being composed: the room's, until a `PATCH` changes it (taken at a frame boundary, here).
    private var canvas: RoomConfig.Canvas
    /// The room view sent back to participants (nil when the room sends none).
    private let view: RoomViewSender?
    private var present: [Participant] = []
    /// The programme's own pictures to the room's viewers (WHEP).
    private let programmeView: ProgrammeVideoSender
    private var viewers: [Participant] = []
    /// The canvas may not show what is configured (no tick composed it since the room started, since its
    /// pictures changed, or since it went idle): a snapshot composes it first.
    private var stale = true
    /// How long a stalled participant's last picture stays before the placeholder replaces it.
    private var holdMs: Int64 { Int64(config.canvas.holdMs) }

    init(
        config: RoomConfig, roster: Roster, programme: ProgrammeFeed, audio: AudioPipeline, schedule: TickSchedule,
        logger: Logger, returnTransport: @escaping RoomViewSender.Transport = { _, _, _ in }
    ) {
        view = config.returnVideo.map {
            RoomViewSender(settings: $0, canvasFps: config.canvas.fps, transport: returnTransport, logger: logger)
        }
        programmeView = ProgrammeVideoSender(transport: returnTransport)
        self.config = config
        self.roster = roster
        self.programme = programme
        self.audio = audio
        self.schedule = schedule
        self.logger = logger
        compositor = VideoCompositor(
            width: config.canvas.width, height: config.canvas.height,
            background: config.backgroundColor, placeholder: config.placeholderColor)
        config.images.apply(to: &compositor)
        timing = CanvasTiming(fps: config.canvas.fps)
        canvas = config.canvas
    }

    /// Takes `new` now if it differs from the canvas being composed (an output about to start must get its size).
    func takeCanvas(_ new: RoomConfig.Canvas) {
        if new != canvas { resize(to: new) }
    }

    /// A new canvas from this frame on: a compositor of the new size and colours with the room's pictures, the
    /// programme's encoder made again (its next picture a keyframe after a new sequence header), the room view
    /// letterboxed anew.
    private func resize(to new: RoomConfig.Canvas) {
        let sized = new.width != canvas.width || new.height != canvas.height
        canvas = new
        guard sized else {
            compositor.background = YUVColor(hex: new.background) ?? compositor.background
            compositor.placeholder = YUVColor(hex: new.placeholder) ?? compositor.placeholder
            return
        }
        compositor = VideoCompositor(
            width: new.width, height: new.height, background: YUVColor(hex: new.background) ?? .black,
            placeholder: YUVColor(hex: new.placeholder) ?? .black)
        roster.currentImages.apply(to: &compositor)
        tiles.removeAll(keepingCapacity: true)
        programme.resize(width: new.width, height: new.height)
        view?.canvasResized()
        logger.info(
            "canvas now \(new.width)x\(new.height)", metadata: ["room": "\(config.name)"])
    }

    /// Composes and encodes canvas `index` of the room's video schedule.
    func tick(_ index: Int64) {
        // Under dynamic frame rate, skipped canvases are not even composed.
        guard programme.wantsCanvas(index: index) else { return }
        // Nobody in the room and no output: nothing would change on the canvas or go anywhere (an idle room costs
        // nothing). A snapshot composes it when it asks.
        guard programme.hasOutputs || roster.count > 0 || roster.hasViewers else {
            goIdle()
            return
        }
        stale = false
        let now = MonotonicClock.nowMs()
        // Placed again only when the layout, the participants or the anchor changed (hot path: computing them
        // allocates a few arrays, and they stay the same for thousands of frames).
        if let changed = roster.placementInputs(ifChangedSince: placedVersion) {
            if changed.canvas != canvas { resize(to: changed.canvas) }
            placements = LayoutEngine.placements(
                for: changed.layout, participants: changed.order,
                canvasWidth: canvas.width, canvasHeight: canvas.height,
                anchor: changed.anchor)
            placedVersion = changed.version
            labels = placements.map { placement in
                let name = roster.participant(placement.userId)?.shownName ?? placement.userId
                return (roomLabels.label(placement.label, name: name, rect: placement.rect), nil, false)
            }
            timing.placed(placements.map { ($0.userId, $0.rect) }, nowMs: now)
            // A screen share is decoded only while a region shows it; a simulcast stream in the layer that covers
            // its tile.
            let screens = Set(placements.filter { $0.source == .screen }.map(\.userId))
            for p in roster.participants {
                p.setScreenShown(screens.contains(p.userId))
                p.placeTiles(placements)
            }
        }
        tiles.removeAll(keepingCapacity: true)
        let dueAhead = timing.begin(nowMs: now, everyCanvas: programme.currentFps == config.canvas.fps)
        if timing.leadTargetChanged {
            logger.debug("video lead now \(timing.lead.targetMs) ms", metadata: ["room": "\(config.name)"])
        }
        for (i, placement) in placements.enumerated() {
            guard let p = roster.participant(placement.userId) else { continue }
            var pictureTiming = PictureTiming()
            let frame =
                placement.source == .screen
                ? p.currentScreenFrame(nowMs: now, holdMs: holdMs)
                : p.currentFrame(nowMs: now, holdMs: holdMs, leadMs: dueAhead, timing: &pictureTiming)
            timing.observe(placement: i, pictureTiming)
            if frame == nil, !labels[i].cardMade {
                labels[i].card = roomLabels.card(placement.label, name: p.shownName, rect: placement.rect)
                labels[i].cardMade = true
            }
            tiles.append(
                Tile(
                    rect: placement.rect, fit: placement.fit, picture: frame, alpha: placement.alpha,
                    border: placement.border, speaking: frame == nil && audio.isSpeaking(p.userId),
                    label: labels[i].label, card: labels[i].card))
        }
        let started = threadCPUMicros()
        compositor.compose(tiles)
        let composed = threadCPUMicros()
        let stamp = timing.stamp
        programme.encodeVideo(compositor.canvas, index: index, leadMs: stamp.leadMs, phaseMs: stamp.phaseMs)
        let encoded = threadCPUMicros()
        if roster.hasViewers {
            roster.fillViewers(&viewers)
            let fps = Int64(config.canvas.fps)
            // RTP time is the programme's (its pictures stamped ahead of their sound by the lead, as the outputs
            // have them); sender reports map the compose time to now, as the viewers' sound maps its tick.
            let composedMs = index * 1000 / fps + stamp.phaseMs
            if programmeView.tick(
                tag: programme.lastVideoTag, parameterSets: programme.parameterSets, viewers: viewers,
                rtpTimestamp: UInt32(truncatingIfNeeded: (composedMs + stamp.leadMs) * 90),
                reportTimestamp: UInt32(truncatingIfNeeded: composedMs * 90),
                reportDue: index % fps == 0, nowMs: now)
            {
                programme.requestKeyframe()
            }
            viewers.removeAll(keepingCapacity: true)
        }
        if let view {
            roster.fill(&present)
            view.tick(
                canvas: compositor.canvas, index: index, present: present, nowMs: now,
                reportDue: index % Int64(config.canvas.fps) == 0)
            present.removeAll(keepingCapacity: true)
        }
        stageCPU.add(
            compositeMicros: composed - started, encodeMicros: encoded - composed,
            viewMicros: threadCPUMicros() - encoded, nowMs: now)
        let shift = timing.end(nowMs: now)
        if let move = timing.phaseMoveStartedMs {
            logger.debug(
                "canvas phase moving by \(move) ms",
                metadata: ["room": "\(config.name)", "offsetMs": "\(timing.phase.offsetMs - shift)"])
        }
        if shift != 0 { schedule.shiftVideo(byMs: shift) }
    }

    /// What the canvas ticks cost, by stage (read by the metrics from any thread).
    let stageCPU = StageCPU()

    /// Room view frames encoded so far, per codec.
    var viewFrames: (vp8: Int, h264: Int) { (view?.frames(.vp8) ?? 0, view?.frames(.h264) ?? 0) }
    /// Programme pictures sent to viewers so far.
    var programmeFramesSent: Int { programmeView.framesSent }

    /// Nobody is left to draw: the tiles of the last canvas go (a snapshot must not show them) and the canvas is
    /// composed only when a snapshot asks.
    func goIdle() {
        tiles.removeAll(keepingCapacity: true)
        stale = true
    }

    /// Takes the room's pictures (background, watermark, placeholder) at the next canvas.
    func apply(_ images: RoomImages) {
        images.apply(to: &compositor)
        stale = true
    }

    /// The current canvas (sharing its planes until the next compose writes them), for snapshots.
    var snapshot: VideoFrame {
        takeCanvas(roster.currentCanvas)
        if stale {
            // The tiles of the last tick (none in an idle room) with the pictures configured now.
            stale = false
            compositor.compose(tiles)
        }
        return compositor.canvas
    }
}
