/// How far ahead of its compose time a canvas is stamped, so pictures need not wait for their sound.
///
/// Lip-sync (see `VideoPresenter`) may show a picture in the canvas stamped T only if the sound stamped T
/// was captured with it. Stamped at its compose time, a canvas must show pictures as old as the sound being
/// mixed now, which went through the audio path (a FIFO deep enough for network jitter, 20 ms blocks): each
/// picture waited ≈60 ms on the room, and with the strict interleave another ≈43 ms for the AAC encoder.
/// Stamping the canvas `leadMs` later lets it show pictures that much newer, with timestamps that still
/// match their sound; with the low-latency interleave the picture then leaves as soon as it is encoded.
///
/// The lead must not exceed any participant's *spare*: how far its newest picture, when decoded, was ahead
/// of the sound being mixed. More would show that picture late against its voice. (Taken at the canvas that
/// first shows it, the spare also lost that canvas's wait, up to a frame interval, and the lead stayed that
/// much too low: pictures then waited for their sound, and `CanvasPhase` lined the canvases up with where
/// they fell due instead of with their decoding.) So the lead follows the smallest spare seen over a second
/// (every participant with sender reports on both streams), minus a margin; it moves at most `stepMs` per
/// canvas, so canvas timestamps stay evenly spaced (33 ± 4 ms at 30 fps) and never go back; decreases are always
/// taken, increases under `hysteresisMs` are ignored so it does not wander with arrival jitter. Without
/// observations it keeps its value. Confined to the room's queue.
struct VideoLead {
    static let windowMs: Int64 = 1000
    static let marginMs: Int64 = 5
    /// Beyond this a sender's clocks are suspect; the picture waits instead.
    static let maxLeadMs: Int64 = 200
    static let stepMs: Int64 = 4
    static let hysteresisMs: Int64 = 10

    private(set) var leadMs: Int64 = 0
    private(set) var targetMs: Int64 = 0
    private var windowStart: Int64?
    private var smallestSpare = Int64.max

    /// One participant's spare (ms; negative when its picture trails its sound) as of its newest picture's
    /// decoding, reported by the next canvas.
    mutating func observe(spareMs: Int64) {
        smallestSpare = min(smallestSpare, spareMs)
    }

    /// The lead for the canvas composed at `nowMs`; call once per canvas, before composing it.
    mutating func next(nowMs: Int64) -> Int64 {
        let start = windowStart ?? nowMs
        windowStart = start
        if nowMs - start >= Self.windowMs {
            windowStart = nowMs
            if smallestSpare != .max {
                let target = max(0, min(Self.maxLeadMs, smallestSpare - Self.marginMs))
                // Decreases are always taken (a lead above someone's spare shows their pictures late); only
                // small increases are ignored, so the lead does not wander with arrival jitter.
                if target < targetMs || target - targetMs >= Self.hysteresisMs { targetMs = target }
            }
            smallestSpare = .max
        }
        if leadMs < targetMs {
            leadMs = min(targetMs, leadMs + Self.stepMs)
        } else if leadMs > targetMs {
            leadMs = max(targetMs, leadMs - Self.stepMs)
        }
        return leadMs
    }
}
