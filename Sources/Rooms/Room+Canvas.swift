import Media
import Mixing

extension Room {
    /// Composes and encodes one canvas (on `queue`, tick `index` of the room's video schedule): places the layout
    /// when it changed, takes each tile's picture, and lets `CanvasTiming` stamp the canvas and move the clock.
    func videoTick(_ index: Int64) {
        // Under dynamic frame rate, skipped canvases are not even composed.
        guard compositor != nil, programme.wantsCanvas(index: index) else { return }
        // Nobody in the room and no output: nothing would change on the canvas or go anywhere (an idle room costs
        // nothing). A snapshot composes it when it asks.
        guard programme.hasOutputs || participantCount > 0 else { goIdle(); return }
        canvasStale = false
        let now = Clock.nowMs()
        // Placed again only when the layout, the participants or the anchor changed (hot path: computing them
        // allocates a few arrays, and they stay the same for thousands of frames).
        let changed: (layout: Layout, order: [String], anchor: String?, version: UInt64)? = lock.withLock {
            placementInputsVersion == placedVersion ? nil : (layout, joinOrder, anchorCandidate, placementInputsVersion)
        }
        if let changed {
            placements = LayoutEngine.placements(for: changed.layout, participants: changed.order, canvasWidth: config.canvas.width,
                                                 canvasHeight: config.canvas.height, anchor: changed.anchor)
            placedVersion = changed.version
            canvasTiming.placed(placements, nowMs: now)
        }
        tiles.removeAll(keepingCapacity: true)
        let dueAhead = canvasTiming.begin(nowMs: now, everyCanvas: programme.currentFps == config.canvas.fps)
        for (i, placement) in placements.enumerated() {
            guard let p = participant(placement.userId) else { continue }
            var timing = PictureTiming()
            let frame = p.hasVideo ? p.currentFrame(nowMs: now, holdMs: holdMs, leadMs: dueAhead, timing: &timing) : nil
            canvasTiming.observe(placement: i, timing)
            tiles.append(Tile(rect: placement.rect, fit: placement.fit, picture: frame, alpha: placement.alpha,
                              border: placement.border, speaking: frame == nil && voice.isSpeaking(p.userId)))
        }
        // In place through the optional: a local copy would share the canvas planes and make the compose copy them.
        compositor?.compose(tiles)
        if let canvas = compositor?.canvas {
            let stamp = canvasTiming.stamp
            programme.encodeVideo(canvas, index: index, leadMs: stamp.leadMs, phaseMs: stamp.phaseMs)
        }
        let shift = canvasTiming.end(nowMs: now)
        if shift != 0, let clock, let token = lock.withLock({ videoToken }) {
            clock.shift(token, byNanoseconds: shift * 1_000_000)
        }
    }

    /// The current canvas (a copy), for snapshots; nil for audio-only rooms.
    var canvasSnapshot: VideoFrame? {
        queue.sync {
            if canvasStale {
                // The tiles of the last tick (none in an idle room) with the pictures configured now.
                canvasStale = false
                compositor?.compose(tiles)
            }
            return compositor?.canvas
        }
    }
}
