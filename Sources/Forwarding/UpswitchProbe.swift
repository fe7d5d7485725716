/// The budget one receiver's slots are fitted in, from its REMB: the REMB itself, except that a calm receiver is
/// now and then allowed one layer more. A receive-side estimate (libwebrtc's REMB) never rises above 1.5 times what
/// arrives plus 10 kbit/s, so a receiver moved down to a small layer would never show room for a larger one. After
/// `calmMs` without congestion, while a slot wants more, the budget is lifted to `sent × liftFactor + liftExtraBps`
/// (about one layer up: layers are 3 to 4 times apart) until the REMB covers what is sent then: the step held, and
/// the next may follow after `stepMs`. Congestion (the REMB falling by more than 10 %, or loss above
/// `lossLimitPercent`) ends a lift at once, and a lift that ends so, or is not covered within `holdMs`, doubles the
/// wait before the next (up to `maxCalmMs`). Time is passed in. Pure.
public struct UpswitchProbe: Sendable, Equatable {
    public static let calmMs: Int64 = 2000
    public static let stepMs: Int64 = 1000
    public static let maxCalmMs: Int64 = 64000
    public static let holdMs: Int64 = 10000
    public static let liftFactor = 4
    public static let liftExtraBps = 100_000
    public static let lossLimitPercent = 5

    private var calmSinceMs: Int64?
    private var waitMs = UpswitchProbe.calmMs
    private var lift: (bps: Int, sentBefore: Int, sinceMs: Int64)?
    private var lastEstimate: Int?

    public init() {}

    public static func == (a: Self, b: Self) -> Bool {
        a.calmSinceMs == b.calmSinceMs && a.waitMs == b.waitMs && a.lift?.bps == b.lift?.bps
            && a.lift?.sentBefore == b.lift?.sentBefore && a.lift?.sinceMs == b.lift?.sinceMs
            && a.lastEstimate == b.lastEstimate
    }

    /// Whether a lift is on now.
    public var lifting: Bool { lift != nil }
    /// How long the receiver must be calm before the next lift.
    public var currentWaitMs: Int64 { waitMs }

    /// The budget for this second: `estimate` the receiver's REMB (nil: none yet, no limit), `sentBps` what its
    /// slots are sent now, `lossPercent` its recent loss, `wantsMore` whether any slot would take a larger layer
    /// than the estimate allows.
    public mutating func budget(
        estimate: Int?, sentBps: Int, lossPercent: Int, wantsMore: Bool, nowMs: Int64
    ) -> Int? {
        guard let estimate else { return nil }
        defer { lastEstimate = estimate }
        let congested = lossPercent > Self.lossLimitPercent || lastEstimate.map { estimate * 10 < $0 * 9 } ?? false
        if congested {
            waitMs = lift == nil ? max(waitMs, Self.calmMs) : min(waitMs * 2, Self.maxCalmMs)
            lift = nil
            calmSinceMs = nowMs
            return estimate
        }
        if let current = lift {
            if estimate >= current.bps || (sentBps > current.sentBefore && estimate >= sentBps) {
                // The step held: the next may follow soon.
                lift = nil
                waitMs = Self.stepMs
                calmSinceMs = nowMs
                return estimate
            }
            guard nowMs - current.sinceMs < Self.holdMs else {
                lift = nil
                waitMs = min(max(waitMs, Self.calmMs) * 2, Self.maxCalmMs)
                calmSinceMs = nowMs
                return estimate
            }
            return current.bps
        }
        let calmSince = calmSinceMs ?? nowMs
        calmSinceMs = calmSince
        guard wantsMore, nowMs - calmSince >= waitMs else { return estimate }
        let bps = max(estimate, sentBps * Self.liftFactor + Self.liftExtraBps)
        lift = (bps, sentBps, nowMs)
        return bps
    }
}
