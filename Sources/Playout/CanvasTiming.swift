import Media

/// When a room composes its canvases and how they are stamped: the video lead (`VideoLead`: how far ahead of its
/// sound a canvas is stamped, so pictures need not wait for it) and the canvas phase (`CanvasPhase`: where in
/// the frame interval a canvas is composed, following the largest tile's pictures). Per canvas: `begin`, an
/// `observe` per tile, `stamp` for its timestamp, then `end`. Confined to the room's queue.
public struct CanvasTiming {
    public private(set) var lead = VideoLead()
    public private(set) var phase: CanvasPhase
    /// The placement whose pictures the phase follows: the largest tile (in co-streaming, the anchor's).
    public private(set) var follows: Int?
    /// Whose tile that is: another participant in the same place is another sender's clock.
    private var followedUser: String?
    private let fps: Int
    private var leadMs: Int64 = 0
    /// Set by `begin` when the lead's target moved (the room logs it).
    public private(set) var leadTargetChanged = false
    /// Set by `end` when the phase started a move: the whole move (ms), for the room's log.
    public private(set) var phaseMoveStartedMs: Int64?

    public init(fps: Int) {
        self.fps = fps
        phase = CanvasPhase(fps: fps)
    }

    /// The layout was placed again: follow the largest tile, and forget what was seen of another one's pictures.
    public mutating func placed(_ tiles: [(userId: String, rect: Rect)], nowMs: Int64) {
        let largest = Self.largestTile(tiles)
        let user = largest.map { tiles[$0].userId }
        if largest != follows || user != followedUser { phase.restart(nowMs: nowMs) }
        follows = largest
        followedUser = user
    }

    /// Starts the canvas composed at `nowMs`; returns how far after the sound being mixed its pictures may have
    /// been captured and still be due. `everyCanvas` is false while the frame-rate controller skips canvases:
    /// waits then span several intervals and say nothing of phase.
    public mutating func begin(nowMs: Int64, everyCanvas: Bool) -> Int64 {
        if !everyCanvas { phase.restart(nowMs: nowMs) }
        let target = lead.targetMs
        leadMs = lead.next(nowMs: nowMs)
        leadTargetChanged = lead.targetMs != target
        // A canvas stands for half a frame either side of its time: a picture due within that is shown now
        // rather than a whole frame late. Capped at 20 ms, so at low frame rates no picture is shown more than
        // 20 ms before its sound (far below what anyone notices; up to 45 ms is not detectable, BT.1359).
        return leadMs + Int64(min(20, 500 / max(1, fps)))
    }

    /// What the canvas learnt of the pictures of placement `index`.
    public mutating func observe(placement index: Int, _ timing: PictureTiming) {
        if let ahead = timing.aheadOfSoundMs { lead.observe(aheadOfSoundMs: ahead) }
        if index == follows, let ready = timing.readyForMs { phase.observe(waitMs: ready) }
    }

    /// How much later than index × interval the canvas is stamped: its lead, and how much later it was composed.
    public var stamp: (leadMs: Int64, phaseMs: Int64) { (leadMs, phase.offsetMs) }

    /// Ends the canvas composed at `nowMs`: the shift (ms) to make to the canvas clock before the next one.
    public mutating func end(nowMs: Int64) -> Int64 {
        let moving = phase.remainingMs != 0
        let shift = phase.next(nowMs: nowMs)
        phaseMoveStartedMs = shift != 0 && !moving ? shift + phase.remainingMs : nil
        return shift
    }

    /// The index of the tile with the largest area, the first of equals; nil when there is none.
    public static func largestTile(_ tiles: [(userId: String, rect: Rect)]) -> Int? {
        var best: (index: Int, area: Int)?
        for (i, p) in tiles.enumerated() where p.rect.width * p.rect.height > best?.area ?? -1 {
            best = (i, p.rect.width * p.rect.height)
        }
        return best?.index
    }
}

/// What a canvas learnt of one participant's pictures (`VideoReceiver.currentFrame`).
public struct PictureTiming {
    /// Set on the first canvas after a new picture was decoded: how far that picture was ahead of the sound being
    /// mixed when it was decoded (ms; what `VideoLead` may use).
    public var aheadOfSoundMs: Int64?
    /// Set on the canvas that shows a picture for the first time: how long it had been ready, decoded and due
    /// (ms; what `CanvasPhase` lines the canvases up with).
    public var readyForMs: Int64?

    public init(aheadOfSoundMs: Int64? = nil, readyForMs: Int64? = nil) {
        self.aheadOfSoundMs = aheadOfSoundMs
        self.readyForMs = readyForMs
    }
}
