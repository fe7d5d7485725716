/// Lowers the encoded frame rate under queue pressure, down to `minFps`, and raises it back once the
/// queues have stayed empty (opt-in per room: `"video": {"dynamicFps": true}`).
///
/// Pure, like `AdaptiveBitrateController`, and driven the same way. Steps down to ×0.75 of the current
/// rate (30 → 22 → 16 → 12 → 10) and up by +25 % (10 → 12 → 15 → 18 → 22 → 27 → 30). The canvas keeps
/// its rate; `shouldEncode(canvasIndex:)` picks which canvases to encode, spread evenly, so timestamps
/// (canvas index ÷ canvas fps) stay exact and the skipped ones simply leave gaps, which FLV allows.
/// x264 spends its per-frame budget (bitrate ÷ canvas fps) on fewer frames, so the bitrate falls with the rate.
public struct FrameRateController: Sendable {
    public static let defaultMinFps = 10

    /// The canvas rate: the most that can be encoded.
    public let maxFps: Int
    public let minFps: Int
    public private(set) var currentFps: Int
    private var stepper: PressureStepper

    public init(
        canvasFps: Int, minFps: Int = FrameRateController.defaultMinFps, tuning: AdaptationTuning = AdaptationTuning()
    ) {
        maxFps = max(1, canvasFps)
        self.minFps = min(max(1, minFps), maxFps)
        currentFps = maxFps
        stepper = PressureStepper(tuning: tuning)
    }

    public var isAtMinimum: Bool { currentFps <= minFps }
    public var isAtMaximum: Bool { currentFps >= maxFps }

    /// One control tick (see `AdaptiveBitrateController.update`). `mayDecrease` false holds the rate
    /// (the bitrate gives way first). Returns the new rate when it changed.
    public mutating func update(queueMs: Int?, nowMs: Int64, mayDecrease: Bool = true) -> Int? {
        switch stepper.step(
            queueMs: queueMs, nowMs: nowMs, canGoDown: mayDecrease && !isAtMinimum, canGoUp: !isAtMaximum)
        {
        case .down:
            currentFps = max(minFps, currentFps * 3 / 4)
        case .up:
            currentFps = min(maxFps, currentFps + max(1, currentFps / 4))
        case .hold:
            return nil
        }
        return currentFps
    }

    /// Whether canvas number `canvasIndex` is encoded at the current rate: canvas k is encoded when
    /// ⌊k·fps/canvasFps⌋ moves on from canvas k−1, which spreads `fps` of every `canvasFps` canvases evenly.
    public func shouldEncode(canvasIndex: Int64) -> Bool {
        guard currentFps < maxFps, canvasIndex > 0 else { return true }
        let fps = Int64(currentFps), canvas = Int64(maxFps)
        return canvasIndex * fps / canvas != (canvasIndex - 1) * fps / canvas
    }
}
