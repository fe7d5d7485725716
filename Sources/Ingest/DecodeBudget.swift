/// How much decoding one participant's video may cost: at most `budgetMicros` of decoder CPU time in any window of
/// `windowMs`. A sender that spends its window gets nothing more decoded in it and is held to keyframes only for
/// `penaltyMs`, so one expensive camera cannot take the decode threads from everyone else
/// (docs/architecture.md, "Decoding off the packet path").
///
/// Pure: the owner charges what each decode cost and asks before the next one; time is injected.
public struct DecodeBudget: Sendable {
    public enum Verdict: Equatable, Sendable {
        case decode
        /// This window's budget is spent: nothing is decoded until the next one.
        case windowSpent
        /// Held to keyframes after exceeding the budget; this is not one.
        case keyframesOnly
    }

    public let budgetMicros: Int64
    public let windowMs: Int64
    public let penaltyMs: Int64
    /// Times the budget was exceeded (each one starts or extends a keyframes-only period).
    public private(set) var exceeded = 0
    /// CPU time spent in the last whole window, for the stream's report.
    public private(set) var lastWindowMicros: Int64 = 0
    private var windowStart: Int64?
    private var spentMicros: Int64 = 0
    private var keyframesOnlyUntil: Int64?

    public init(budgetMicros: Int64, windowMs: Int64 = 1000, penaltyMs: Int64 = 10_000) {
        self.budgetMicros = budgetMicros
        self.windowMs = windowMs
        self.penaltyMs = penaltyMs
    }

    /// Whether the next frame may be decoded.
    public mutating func admit(isKeyframe: Bool, nowMs: Int64) -> Verdict {
        roll(nowMs: nowMs)
        if spentMicros >= budgetMicros { return .windowSpent }
        if let until = keyframesOnlyUntil {
            if nowMs < until { return isKeyframe ? .decode : .keyframesOnly }
            keyframesOnlyUntil = nil
        }
        return .decode
    }

    /// Whether the stream is held to keyframes at `nowMs`.
    public func isKeyframesOnly(nowMs: Int64) -> Bool { keyframesOnlyUntil.map { nowMs < $0 } ?? false }

    /// A decode admitted at `nowMs` cost `micros` of CPU time.
    public mutating func charge(micros: Int64, nowMs: Int64) {
        roll(nowMs: nowMs)
        let before = spentMicros
        spentMicros += max(0, micros)
        if before < budgetMicros, spentMicros >= budgetMicros {
            exceeded += 1
            keyframesOnlyUntil = nowMs + penaltyMs
        }
    }

    private mutating func roll(nowMs: Int64) {
        guard let start = windowStart else {
            windowStart = nowMs
            return
        }
        guard nowMs - start >= windowMs else { return }
        // A window with no decodes in it reads as 0, not as the last busy one.
        lastWindowMicros = nowMs - start < 2 * windowMs ? spentMicros : 0
        windowStart = nowMs
        spentMicros = 0
    }
}
