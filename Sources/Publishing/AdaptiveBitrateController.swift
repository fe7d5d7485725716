/// Lowers the video bitrate while the outputs' queues back up and raises it again once they have
/// stayed empty for a while (opt-in per room: `"video": {"adaptiveBitrate": true, "minBitrate": …}`).
///
/// Pure: fed one control tick at a time (every 500 ms in a room) with the largest queue span among the
/// connected outputs and the time. Steps down to ×0.75 (integer kbps, never below the minimum) at most
/// once per `decreaseIntervalMs` while congested; after `recoverAfterMs` of clear queues, steps up by
/// 10 % of the target (at least 1 kbps, never above it) at most once per `increaseIntervalMs`.
/// Additive increase, multiplicative decrease (as TCP does): quick to yield, steady to come back, and
/// back from the floor to the target within about 15 s with the default tuning.
public struct AdaptiveBitrateController: Sendable {
    public let targetKbps: Int
    public let minKbps: Int
    public private(set) var currentKbps: Int
    private var stepper: PressureStepper

    public init(targetKbps: Int, minKbps: Int, tuning: AdaptationTuning = AdaptationTuning()) {
        self.targetKbps = max(1, targetKbps)
        self.minKbps = min(max(1, minKbps), self.targetKbps)
        currentKbps = self.targetKbps
        stepper = PressureStepper(tuning: tuning)
    }

    public var isAtMinimum: Bool { currentKbps <= minKbps }
    public var isAtTarget: Bool { currentKbps >= targetKbps }

    /// One control tick. `queueMs`: the largest queue span among connected outputs, nil when none is
    /// connected. `mayIncrease` false holds the bitrate down (the frame rate recovers first).
    /// Returns the new bitrate when it changed.
    public mutating func update(queueMs: Int?, nowMs: Int64, mayIncrease: Bool = true) -> Int? {
        switch stepper.step(
            queueMs: queueMs, nowMs: nowMs, canGoDown: !isAtMinimum, canGoUp: mayIncrease && !isAtTarget)
        {
        case .down:
            currentKbps = max(minKbps, currentKbps * 3 / 4)
        case .up:
            currentKbps = min(targetKbps, currentKbps + max(1, targetKbps / 10))
        case .hold:
            return nil
        }
        return currentKbps
    }
}
