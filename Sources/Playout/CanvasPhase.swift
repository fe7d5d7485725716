/// Where in the frame interval a room composes its canvases, so that the largest tile's pictures (in co-streaming,
/// the anchor's) are shown as soon as they are ready rather than up to a whole interval later.
///
/// Once a second (`windowMs`) it picks the shift of the canvas clock that minimises the mean wait of the pictures
/// shown for the first time, keeping `marginMs` before each canvas; it moves at most `stepMs` per canvas, only when
/// that saves `minGainMs`. `offsetMs`, the sum of the shifts, is added to every canvas timestamp. The reasoning and
/// the measurements behind it: docs/architecture.md, "The canvas phase". Confined to the room's queue; time is
/// given, not read.
public struct CanvasPhase {
    /// Fewer pictures than this in a window (a slow or stalled sender) move nothing.
    public static let minObservations = 10
    /// Pictures kept per window (60 fps fills half); storage reserved once.
    public static let capacity = 128
    public static let marginMs = 3.0
    public static let minGainMs = 2.0
    /// A move is made only when at least `minClustered` of the window's pictures would then be ready within
    /// `clusterMs` past the margin: a sender at another frame rate (25 fps on a 30 fps canvas, or 29.5) spreads
    /// its pictures over the interval or drifts through it, and chasing it would make the canvas hunt, a
    /// half-interval move every second for 29.5 fps.
    public static let clusterMs = 8.0
    public static let minClustered = 0.8

    /// The canvas interval, in milliseconds.
    public let intervalMs: Double
    /// A second, or 15 canvases at low frame rates (enough pictures to judge by).
    public let windowMs: Int64
    /// The most a canvas is moved: 2 ms at 30 fps, a sixteenth of the interval at low frame rates.
    public let stepMs: Int64
    /// The sum of the shifts made so far (ms; positive: canvases composed later than index × interval).
    public private(set) var offsetMs: Int64 = 0
    /// What is left of the shift being made.
    public private(set) var remainingMs: Int64 = 0
    private var waits: [Int64] = []
    private var windowStart: Int64?

    public init(fps: Int) {
        intervalMs = 1000 / Double(max(1, fps))
        windowMs = max(1000, Int64(intervalMs * 15))
        stepMs = max(2, Int64(intervalMs / 16))
        waits.reserveCapacity(Self.capacity)
    }

    /// How long the followed participant's picture had been ready when the canvas composed now first showed it.
    public mutating func observe(waitMs: Int64) {
        // Longer than two intervals: the canvas before was skipped or the stream stalled; it says nothing of phase.
        guard waitMs >= 0, Double(waitMs) < 2 * intervalMs, waits.count < Self.capacity else { return }
        waits.append(waitMs)
    }

    /// Forgets the window's pictures (the followed participant changed, or canvases are being skipped).
    public mutating func restart(nowMs: Int64) {
        waits.removeAll(keepingCapacity: true)
        windowStart = nowMs
    }

    /// The shift (ms) to make to the canvas clock after the canvas composed at `nowMs`; call once per canvas,
    /// after encoding it (its timestamp takes `offsetMs` from before the call).
    public mutating func next(nowMs: Int64) -> Int64 {
        let start = windowStart ?? nowMs
        windowStart = start
        if remainingMs == 0, nowMs - start >= windowMs {
            if waits.count >= Self.minObservations {
                let (shift, gain) = bestShift()
                if gain >= Self.minGainMs, clustered(shift: shift) >= Self.minClustered { remainingMs = shift }
            }
            restart(nowMs: nowMs)
        }
        guard remainingMs != 0 else { return 0 }
        let step = max(-stepMs, min(stepMs, remainingMs))
        remainingMs -= step
        offsetMs += step
        // Pictures seen while the clock moves tell of a phase that is not the one it moves to.
        restart(nowMs: nowMs)
        return step
    }

    /// The shift within half an interval either way with the least mean wait, and what it saves on the mean.
    private func bestShift() -> (shift: Int64, gainMs: Double) {
        let here = cost(shift: 0)
        var best = (shift: Int64(0), cost: here)
        let reach = Int64(intervalMs / 2)
        // Nearest first, so a tie keeps the smaller move.
        for distance in 1...max(1, reach) {
            let later = cost(shift: distance)
            if later < best.cost { best = (distance, later) }
            let earlier = cost(shift: -distance)
            if earlier < best.cost { best = (-distance, earlier) }
        }
        return (best.shift, (here - best.cost) / Double(waits.count))
    }

    /// The share of the window's pictures that would wait at most `clusterMs` past the margin after `shift`.
    private func clustered(shift: Int64) -> Double {
        var near = 0
        for wait in waits where shiftedWait(wait, by: shift) <= Self.marginMs + Self.clusterMs { near += 1 }
        return Double(near) / Double(waits.count)
    }

    /// A picture's wait had the canvases been composed `shift` ms later (less than the margin: the next canvas).
    private func shiftedWait(_ wait: Int64, by shift: Int64) -> Double {
        var w = Double(wait + shift).truncatingRemainder(dividingBy: intervalMs)
        if w < 0 { w += intervalMs }
        return w < Self.marginMs ? w + intervalMs : w
    }

    /// The waits had the canvases been composed `shift` ms later: a picture ready less than the margin before
    /// its canvas counts as shown on the next one.
    private func cost(shift: Int64) -> Double {
        var total = 0.0
        for wait in waits { total += shiftedWait(wait, by: shift) }
        return total
    }
}
