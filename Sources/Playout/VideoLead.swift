/// How far ahead of its compose time a canvas is stamped (its *lead*), so pictures need not wait for their
/// sound. The lead follows the smallest ahead-of-sound figure of any participant over a second, minus a margin,
/// moving at most `stepMs` per canvas and never back in time; docs/architecture.md ("Lip-sync and the video lead")
/// gives the reasoning. Confined to the room's queue.
public struct VideoLead {
    public static let windowMs: Int64 = 1000
    public static let marginMs: Int64 = 5
    /// Beyond this a sender's clocks are suspect; the picture waits instead.
    public static let maxLeadMs: Int64 = 200
    public static let stepMs: Int64 = 4
    public static let hysteresisMs: Int64 = 10

    public private(set) var leadMs: Int64 = 0
    public private(set) var targetMs: Int64 = 0
    private var windowStart: Int64?
    private var smallestAhead = Int64.max

    public init() {}

    /// How far one participant's newest picture was ahead of its sound when decoded (ms; negative when it
    /// trails), reported by the next canvas.
    public mutating func observe(aheadOfSoundMs: Int64) {
        smallestAhead = min(smallestAhead, aheadOfSoundMs)
    }

    /// The lead for the canvas composed at `nowMs`; call once per canvas, before composing it.
    public mutating func next(nowMs: Int64) -> Int64 {
        let start = windowStart ?? nowMs
        windowStart = start
        if nowMs - start >= Self.windowMs {
            windowStart = nowMs
            if smallestAhead != .max {
                let target = max(0, min(Self.maxLeadMs, smallestAhead - Self.marginMs))
                // Decreases are always taken (a lead above someone's ahead-of-sound figure shows their pictures late); only
                // small increases are ignored, so the lead does not wander with arrival jitter.
                if target < targetMs || target - targetMs >= Self.hysteresisMs { targetMs = target }
            }
            smallestAhead = .max
        }
        if leadMs < targetMs {
            leadMs = min(targetMs, leadMs + Self.stepMs)
        } else if leadMs > targetMs {
            leadMs = max(targetMs, leadMs - Self.stepMs)
        }
        return leadMs
    }
}
