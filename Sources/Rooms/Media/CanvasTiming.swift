import Logging
import Media
import Mixing

/// When a room composes its canvases and how they are stamped: the video lead (`VideoLead`: how far ahead of its
/// sound a canvas is stamped, so pictures need not wait for it) and the canvas phase (`CanvasPhase`: where in
/// the frame interval a canvas is composed, following the largest tile's pictures). Per canvas: `begin`, an
/// `observe` per tile, `stamp` for its timestamp, then `end`. Confined to the room's queue.
struct CanvasTiming {
    private(set) var lead = VideoLead()
    private(set) var phase: CanvasPhase
    /// The placement whose pictures the phase follows: the largest tile (in co-streaming, the anchor's).
    private(set) var follows: Int?
    /// Whose tile that is: another participant in the same place is another sender's clock.
    private var followedUser: String?
    private let fps: Int
    private var leadMs: Int64 = 0
    private let logger: Logger
    private let room: String

    init(fps: Int, logger: Logger, room: String) {
        self.fps = fps
        phase = CanvasPhase(fps: fps)
        self.logger = logger
        self.room = room
    }

    /// The layout was placed again: follow the largest tile, and forget what was seen of another one's pictures.
    mutating func placed(_ placements: [Placement], nowMs: Int64) {
        let largest = Self.largestTile(placements)
        let user = largest.map { placements[$0].userId }
        if largest != follows || user != followedUser { phase.restart(nowMs: nowMs) }
        follows = largest
        followedUser = user
    }

    /// Starts the canvas composed at `nowMs`; returns how far after the sound being mixed its pictures may have
    /// been captured and still be due. `everyCanvas` is false while the frame-rate controller skips canvases:
    /// waits then span several intervals and say nothing of phase.
    mutating func begin(nowMs: Int64, everyCanvas: Bool) -> Int64 {
        if !everyCanvas { phase.restart(nowMs: nowMs) }
        let target = lead.targetMs
        leadMs = lead.next(nowMs: nowMs)
        if lead.targetMs != target { logger.debug("video lead now \(lead.targetMs) ms", metadata: ["room": "\(room)"]) }
        // A canvas stands for half a frame either side of its time: a picture due within that is shown now
        // rather than a whole frame late. Capped at 20 ms, so at low frame rates no picture is shown more than
        // 20 ms before its sound (far below what anyone notices; up to 45 ms is not detectable, BT.1359).
        return leadMs + Int64(min(20, 500 / max(1, fps)))
    }

    /// What the canvas learnt of the pictures of placement `index`.
    mutating func observe(placement index: Int, _ timing: PictureTiming) {
        if let spare = timing.spareMs { lead.observe(spareMs: spare) }
        if index == follows, let ready = timing.readyForMs { phase.observe(waitMs: ready) }
    }

    /// How much later than index × interval the canvas is stamped: its lead, and how much later it was composed.
    var stamp: (leadMs: Int64, phaseMs: Int64) { (leadMs, phase.offsetMs) }

    /// Ends the canvas composed at `nowMs`: the shift (ms) to make to the canvas clock before the next one.
    mutating func end(nowMs: Int64) -> Int64 {
        let moving = phase.remainingMs != 0
        let shift = phase.next(nowMs: nowMs)
        if shift != 0, !moving {
            logger.debug("canvas phase moving by \(shift + phase.remainingMs) ms",
                         metadata: ["room": "\(room)", "offsetMs": "\(phase.offsetMs - shift)"])
        }
        return shift
    }

    /// The index of the placement with the largest area, the first of equals; nil when there is none.
    static func largestTile(_ placements: [Placement]) -> Int? {
        var best: (index: Int, area: Int)?
        for (i, p) in placements.enumerated() where p.rect.width * p.rect.height > best?.area ?? -1 {
            best = (i, p.rect.width * p.rect.height)
        }
        return best?.index
    }
}
