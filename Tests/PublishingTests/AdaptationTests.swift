import Testing
@testable import Publishing

/// Feeds a controller one tick every `stepMs` from `fromMs` with the given queue spans; collects what
/// each tick returned (nil: held).
private func run<C>(
    _ controller: inout C, from fromMs: Int64, stepMs: Int64 = 500, queues: [Int?],
    _ tick: (inout C, Int?, Int64) -> Int?
) -> [Int?] {
    queues.enumerated().map { i, queue in tick(&controller, queue, fromMs + Int64(i) * stepMs) }
}

@Suite("Adaptive bitrate and frame rate controllers")
struct AdaptationTests {
    @Test("under pressure the bitrate steps ×0.75 once a second down to the minimum, then holds")
    func bitrateStepsDown() {
        var abr = AdaptiveBitrateController(targetKbps: 2000, minKbps: 300)
        let out = run(&abr, from: 0, queues: Array(repeating: 800, count: 16)) { $0.update(queueMs: $1, nowMs: $2) }
        #expect(out == [1500, nil, 1125, nil, 843, nil, 632, nil, 474, nil, 355, nil, 300, nil, nil, nil])
        #expect(abr.isAtMinimum)
    }

    @Test("after 5 s of clear queues the bitrate climbs 10 % of the target a second back to it")
    func bitrateRecovers() {
        var abr = AdaptiveBitrateController(targetKbps: 1000, minKbps: 400)
        _ = run(&abr, from: 0, stepMs: 1000, queues: [900, 900, 900, 900]) { $0.update(queueMs: $1, nowMs: $2) }
        #expect(abr.currentKbps == 400)  // 750, 562, 421, 400
        // Clear from t = 10 s: nothing until t = 15 s, then one step per second.
        let out = run(&abr, from: 10_000, queues: Array(repeating: 0, count: 30)) { $0.update(queueMs: $1, nowMs: $2) }
        let steps = out.enumerated().compactMap { i, kbps in kbps.map { (10_000 + Int64(i) * 500, $0) } }
        #expect(steps.map(\.0) == stride(from: Int64(15_000), through: 20_000, by: 1000).map { $0 })
        #expect(steps.map(\.1) == [500, 600, 700, 800, 900, 1000])
        #expect(abr.isAtTarget)
    }

    @Test("a queue between the thresholds, or no connected output, restarts the clear period")
    func clearPeriodRestarts() {
        var abr = AdaptiveBitrateController(targetKbps: 1000, minKbps: 500)
        _ = abr.update(queueMs: 600, nowMs: 0)
        #expect(abr.currentKbps == 750)
        // Clear 1–4.5 s, 300 ms (in between) at 5 s, clear again from 5.5 s: first step up at 10.5 s.
        let out = run(&abr, from: 1000, queues: Array(repeating: 50, count: 8) + [300] + Array(repeating: 0, count: 12))
        {
            $0.update(queueMs: $1, nowMs: $2)
        }
        #expect(out.firstIndex { $0 != nil } == 19)  // 1000 + 19 × 500 = 10 500 ms
        #expect(abr.currentKbps == 850)
        var other = AdaptiveBitrateController(targetKbps: 1000, minKbps: 500)
        _ = other.update(queueMs: 600, nowMs: 0)
        let held = run(
            &other, from: 1000, queues: Array(repeating: 0, count: 8) + [nil] + Array(repeating: 0, count: 10)
        ) {
            $0.update(queueMs: $1, nowMs: $2)
        }
        #expect(held.allSatisfy { $0 == nil })
    }

    @Test("the frame rate steps 30 → 22 → 16 → 12 → 10 under pressure and 10 → 12 → 15 → 18 → 22 → 27 → 30 back")
    func frameRateSteps() {
        var fps = FrameRateController(canvasFps: 30)
        let down = run(&fps, from: 0, stepMs: 1000, queues: Array(repeating: 700, count: 5)) {
            $0.update(queueMs: $1, nowMs: $2)
        }
        #expect(down == [22, 16, 12, 10, nil])
        let up = run(&fps, from: 5000, stepMs: 1000, queues: Array(repeating: 0, count: 13)) {
            $0.update(queueMs: $1, nowMs: $2)
        }
        #expect(up == [nil, nil, nil, nil, nil, 12, 15, 18, 22, 27, 30, nil, nil])
        #expect(fps.isAtMaximum)
    }

    @Test("canvases to encode are spread evenly: exactly fps of every canvasFps")
    func decimation() {
        var fps = FrameRateController(canvasFps: 30)
        #expect((0..<6).map { fps.shouldEncode(canvasIndex: $0) } == [true, true, true, true, true, true])
        _ = fps.update(queueMs: 700, nowMs: 0)  // 22 fps
        #expect((1...30).filter { fps.shouldEncode(canvasIndex: Int64($0)) }.count == 22)
        #expect((31...60).filter { fps.shouldEncode(canvasIndex: Int64($0)) }.count == 22)
        for t in 1...3 { _ = fps.update(queueMs: 700, nowMs: Int64(t) * 1000) }  // 10 fps
        #expect(fps.currentFps == 10)
        #expect(
            (0..<10).map { fps.shouldEncode(canvasIndex: $0) } == [
                true, false, false, true, false, false, true, false, false, true,
            ])
    }

    @Test("together, the bitrate gives way first and comes back last")
    func combinedOrder() {
        var adaptation = StreamAdaptation(
            bitrate: AdaptiveBitrateController(targetKbps: 1000, minKbps: 560),
            frameRate: FrameRateController(canvasFps: 24))
        var trace: [String] = []
        for t in 0..<6 {
            let change = adaptation.update(queueMs: 900, nowMs: Int64(t) * 1000)
            trace.append("\(change.bitrateKbps.map(String.init) ?? "-")/\(change.fps.map(String.init) ?? "-")")
        }
        // 1000 → 750 → 562 → 560, then the frame rate: 24 → 18 → 13.
        #expect(trace == ["750/-", "562/-", "560/-", "-/18", "-/13", "-/10"])
        trace = []
        for t in 6..<20 {
            let change = adaptation.update(queueMs: 0, nowMs: Int64(t) * 1000)
            trace.append("\(change.bitrateKbps.map(String.init) ?? "-")/\(change.fps.map(String.init) ?? "-")")
        }
        #expect(
            trace == [
                "-/-", "-/-", "-/-", "-/-", "-/-", "-/12", "-/15", "-/18", "-/22", "-/24",
                "660/-", "760/-", "860/-", "960/-",
            ])
    }
}
