import Testing

@testable import Ingest

@Suite struct DecodeBudgetTests {
    @Test func aSenderWithinItsBudgetIsAlwaysDecoded() {
        var budget = DecodeBudget(budgetMicros: 500_000)
        // 30 fps at 8 ms a frame: 240 ms of every second.
        for frame in 0..<300 {
            let now = Int64(frame) * 33
            #expect(budget.admit(isKeyframe: frame % 60 == 0, nowMs: now) == .decode)
            budget.charge(micros: 8_000, nowMs: now)
        }
        #expect(budget.exceeded == 0)
        #expect(budget.lastWindowMicros == 31 * 8_000)
    }

    @Test func spendingTheWindowStopsDecodingUntilTheNextAndHoldsTheSenderToKeyframes() {
        var budget = DecodeBudget(budgetMicros: 500_000, windowMs: 1000, penaltyMs: 10_000)
        // 78 ms a frame (a 4096×2304 high-bitrate stream): the seventh frame crosses 500 ms.
        var decoded = 0
        for frame in 0..<30 {
            let now = Int64(frame) * 33
            if budget.admit(isKeyframe: frame == 0, nowMs: now) == .decode {
                decoded += 1
                budget.charge(micros: 78_000, nowMs: now)
            }
        }
        #expect(decoded == 7)
        #expect(budget.exceeded == 1)
        #expect(budget.admit(isKeyframe: true, nowMs: 999) == .windowSpent)
        // Next window: keyframes pass, interframes wait out the penalty (counted from the crossing at 198 ms).
        #expect(budget.admit(isKeyframe: false, nowMs: 1000) == .keyframesOnly)
        #expect(budget.admit(isKeyframe: true, nowMs: 1033) == .decode)
        #expect(budget.isKeyframesOnly(nowMs: 10_197))
        #expect(budget.admit(isKeyframe: false, nowMs: 10_197) == .keyframesOnly)
        #expect(budget.admit(isKeyframe: false, nowMs: 10_198) == .decode)
        #expect(!budget.isKeyframesOnly(nowMs: 10_198))
    }

    @Test func keyframesThatAloneExceedTheBudgetExtendThePenalty() {
        var budget = DecodeBudget(budgetMicros: 100_000, windowMs: 1000, penaltyMs: 5_000)
        budget.charge(micros: 150_000, nowMs: 0)
        #expect(budget.exceeded == 1)
        #expect(budget.admit(isKeyframe: true, nowMs: 4_000) == .decode)
        budget.charge(micros: 150_000, nowMs: 4_000)
        #expect(budget.exceeded == 2)
        #expect(budget.admit(isKeyframe: false, nowMs: 8_999) == .keyframesOnly)
        #expect(budget.admit(isKeyframe: false, nowMs: 9_000) == .decode)
    }

    @Test func theReportedCostOfAQuietStretchIsZero() {
        var budget = DecodeBudget(budgetMicros: 500_000)
        budget.charge(micros: 40_000, nowMs: 0)
        _ = budget.admit(isKeyframe: false, nowMs: 1_000)
        #expect(budget.lastWindowMicros == 40_000)
        _ = budget.admit(isKeyframe: false, nowMs: 5_000)
        #expect(budget.lastWindowMicros == 0)
    }
}
