import Testing
import Media
@testable import Playout

@Suite struct CanvasPhaseTests {
    /// Runs 30 fps canvases from `from` for `ms`: each observes the wait `wait(shiftSoFar)` (nil: no new picture)
    /// and asks for the shift to make; returns the shifts.
    func run(_ phase: inout CanvasPhase, from: Int64, ms: Int64, wait: (Int64) -> Int64?) -> [Int64] {
        stride(from: from, to: from + ms, by: 33).map { now in
            if let w = wait(phase.offsetMs) { phase.observe(waitMs: w) }
            return phase.next(nowMs: now)
        }
    }

    /// Where a picture ready `readyAfterTick` ms after canvas time lands once the canvases moved by `offset`.
    static func wait(readyAfterTick: Double, offset: Int64) -> Int64 {
        let interval = 1000.0 / 30
        var w = (interval - readyAfterTick + Double(offset)).truncatingRemainder(dividingBy: interval)
        if w < 0 { w += interval }
        return Int64(w.rounded(.down))
    }

    @Test func picturesReadyJustAfterACanvasMoveTheCanvasesLaterUntilTheyWaitTheMarginOnly() {
        var phase = CanvasPhase(fps: 30)
        // Ready 3.3 ms after each canvas: each waits 30 ms for the next.
        #expect(run(&phase, from: 0, ms: 1000) { _ in 30 }.allSatisfy { $0 == 0 })
        let shifts = run(&phase, from: 1023, ms: 1000) { Self.wait(readyAfterTick: 3.3, offset: $0) }
        // 30 + 7 = 37 ≡ 3.7 ms: the smallest wait that keeps the 3 ms margin; 2 ms a canvas.
        #expect(Array(shifts.prefix(5)) == [2, 2, 2, 1, 0])
        #expect(phase.offsetMs == 7)
        // Now waiting 3 ms: nothing better is worth a move.
        #expect(run(&phase, from: 2100, ms: 3000) { Self.wait(readyAfterTick: 3.3, offset: $0) }.allSatisfy { $0 == 0 })
        #expect(phase.offsetMs == 7)
    }

    @Test func picturesReadyRightAtTheCanvasAreMovedClearOfIt() {
        var phase = CanvasPhase(fps: 30)
        // Jitter puts half just before the canvas (1 ms) and half just after (shown 32 ms later): a stutter.
        var k = 0
        _ = run(&phase, from: 0, ms: 1034) { _ in
            k += 1
            return k % 2 == 0 ? 1 : 32
        }
        // +5: 6 ms and 37 ≡ 3.7 ms, both clear of the margin (+3 would leave 35 ≡ 1.7).
        #expect(phase.remainingMs + phase.offsetMs == 5)
    }

    @Test func picturesWaitingLongMoveTheCanvasesEarlier() {
        var phase = CanvasPhase(fps: 30)
        // Ready 20 ms before the canvas: 16 ms earlier (half an interval, the furthest it looks) leaves 4.
        _ = run(&phase, from: 0, ms: 1034) { _ in 20 }
        #expect(phase.remainingMs + phase.offsetMs == -16)
        let shifts = run(&phase, from: 1034, ms: 330) { _ in nil }
        #expect(shifts.prefix(8) == [-2, -2, -2, -2, -2, -2, -2, 0])
        // Consecutive canvases' timestamps differ by at most a step.
        #expect(shifts.allSatisfy { abs($0) <= phase.stepMs })
    }

    @Test func atLowFrameRatesTheWindowHoldsFifteenCanvasesAndTheStepIsASixteenthOfTheInterval() {
        var phase = CanvasPhase(fps: 5)
        #expect(phase.windowMs == 3000 && phase.stepMs == 12)
        // Ready 10 ms after each 200 ms canvas: 13 ms later leaves 3.
        let shifts = stride(from: Int64(0), to: 3400, by: 200).map { now in
            phase.observe(waitMs: 190)
            return phase.next(nowMs: now)
        }
        #expect(shifts == Array(repeating: 0, count: 15) + [12, 1])
        #expect(phase.offsetMs == 13)
    }

    @Test func aSenderAtAnotherFrameRateIsNotChased() {
        // 29.5 fps on a 30 fps canvas: its pictures drift 16 ms through the interval in a second. The best shift
        // for the window saves more than 2 ms on the mean, but would be wrong a second later (the canvas would hunt).
        var phase = CanvasPhase(fps: 30)
        var k = 0
        _ = run(&phase, from: 0, ms: 3034) { _ in
            k += 1
            return Int64(30 - (k % 30) * 16 / 30)
        }
        #expect(phase.offsetMs == 0 && phase.remainingMs == 0)
        // 25 fps: spread over the whole interval.
        var phase25 = CanvasPhase(fps: 30)
        k = 0
        _ = run(&phase25, from: 0, ms: 3034) { _ in
            k += 1
            return k % 6 == 0 ? nil : Int64((k * 40) % 33)
        }
        #expect(phase25.offsetMs == 0 && phase25.remainingMs == 0)
    }

    @Test func aGainUnderTwoMillisecondsOnTheMeanIsNotWorthAMove() {
        var phase = CanvasPhase(fps: 30)
        _ = run(&phase, from: 0, ms: 3000) { _ in 4 }  // 1 ms closer would keep the margin: not worth it
        #expect(phase.offsetMs == 0 && phase.remainingMs == 0)
    }

    @Test func fewPicturesOrPicturesThatWaitedOverSkippedCanvasesMoveNothing() {
        var phase = CanvasPhase(fps: 30)
        var k = 0
        _ = run(&phase, from: 0, ms: 3000) { _ in
            k += 1
            return k % 4 == 0 ? 25 : nil
        }  // 7 or 8 a second
        #expect(phase.offsetMs == 0 && phase.remainingMs == 0)
        _ = run(&phase, from: 3000, ms: 3000) { _ in 70 }  // over two intervals
        #expect(phase.offsetMs == 0 && phase.remainingMs == 0)
    }

    @Test func aRestartForgetsTheWindow() {
        var phase = CanvasPhase(fps: 30)
        _ = run(&phase, from: 0, ms: 990) { _ in 30 }
        phase.restart(nowMs: 990)
        _ = run(&phase, from: 990, ms: 99) { _ in nil }
        #expect(phase.remainingMs == 0 && phase.offsetMs == 0)
    }

    @Test func anotherParticipantInTheFollowedPlaceRestartsTheWindow() {
        func tile(_ user: String) -> (userId: String, rect: Rect) {
            (user, Rect(x: 0, y: 0, width: 640, height: 360))
        }
        var timing = CanvasTiming(fps: 30)
        timing.placed([tile("a")], nowMs: 0)
        for now in stride(from: Int64(0), to: 990, by: 33) {
            _ = timing.begin(nowMs: now, everyCanvas: true)
            timing.observe(placement: 0, PictureTiming(aheadOfSoundMs: nil, readyForMs: 30))
            _ = timing.end(nowMs: now)
        }
        timing.placed([tile("b")], nowMs: 990)  // same place, another sender: a's waits say nothing of b's
        _ = timing.begin(nowMs: 1023, everyCanvas: true)
        #expect(timing.end(nowMs: 1023) == 0 && timing.phase.remainingMs == 0)
        #expect(timing.follows == 0)
    }

    @Test func theLargestTileIsFollowedTheFirstOfEquals() {
        func tile(_ user: String, _ w: Int, _ h: Int) -> (userId: String, rect: Rect) {
            (user, Rect(x: 0, y: 0, width: w, height: h))
        }
        #expect(CanvasTiming.largestTile([tile("a", 320, 180), tile("b", 1280, 720), tile("c", 640, 360)]) == 1)
        #expect(CanvasTiming.largestTile([tile("a", 640, 360), tile("b", 640, 360)]) == 0)
        #expect(CanvasTiming.largestTile([]) == nil)
    }
}
