/// How the adaptive controllers read output queues, and how fast they may react.
///
/// The signal is the largest queue span (milliseconds of media waiting) among the connected outputs:
/// a link slower than the stream makes it grow; a healthy one keeps it near zero.
public struct AdaptationTuning: Sendable, Equatable {
    /// At or above this span the link is not keeping up: step down.
    public var congestedMs: Int
    /// At or below this span the queue counts as empty.
    public var clearMs: Int
    /// At most one step down this often, so a change can show in the queue before the next one.
    public var decreaseIntervalMs: Int64
    /// The queue must have stayed clear this long before any step up...
    public var recoverAfterMs: Int64
    /// ...and steps up come at most this often.
    public var increaseIntervalMs: Int64

    public init(
        congestedMs: Int = 500, clearMs: Int = 100, decreaseIntervalMs: Int64 = 1000,
        recoverAfterMs: Int64 = 5000, increaseIntervalMs: Int64 = 1000
    ) {
        self.congestedMs = congestedMs
        self.clearMs = clearMs
        self.decreaseIntervalMs = decreaseIntervalMs
        self.recoverAfterMs = recoverAfterMs
        self.increaseIntervalMs = increaseIntervalMs
    }
}

/// Decides, one control tick at a time, whether to step down, step up or hold. Shared by the
/// bitrate and frame-rate controllers; time comes in as milliseconds on the caller's monotonic clock.
struct PressureStepper: Sendable {
    enum Step: Equatable { case down, up, hold }

    let tuning: AdaptationTuning
    private var clearSince: Int64?
    private var lastStepMs: Int64?

    init(tuning: AdaptationTuning) { self.tuning = tuning }

    /// `queueMs` nil means no connected output: nothing to learn, and no evidence the link is clear.
    mutating func step(queueMs: Int?, nowMs: Int64, canGoDown: Bool, canGoUp: Bool) -> Step {
        guard let queueMs else {
            clearSince = nil
            return .hold
        }
        if queueMs >= tuning.congestedMs {
            clearSince = nil
            guard canGoDown, since(lastStepMs, nowMs) >= tuning.decreaseIntervalMs else { return .hold }
            lastStepMs = nowMs
            return .down
        }
        guard queueMs <= tuning.clearMs else {
            clearSince = nil  // in between: the link copes, but not with room to spare
            return .hold
        }
        let clearFrom = clearSince ?? nowMs
        clearSince = clearFrom
        guard canGoUp, nowMs - clearFrom >= tuning.recoverAfterMs,
            since(lastStepMs, nowMs) >= tuning.increaseIntervalMs
        else { return .hold }
        lastStepMs = nowMs
        return .up
    }

    private func since(_ time: Int64?, _ now: Int64) -> Int64 {
        guard let time else { return .max }
        return now - time
    }
}
