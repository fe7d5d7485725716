import Foundation
import Synchronization
import Testing
@testable import Clocks
import TestSupport

@Suite("MixClock")
struct MixClockTests {
    /// What a handler saw: tick index and monotonic arrival time.
    final class Recorder: Sendable {
        let ticks = Mutex<[(tick: Int64, nanos: UInt64)]>([])
        func record(_ tick: Int64) { ticks.withLock { $0.append((tick, monotonicNanoseconds())) } }
        var snapshot: [(tick: Int64, nanos: UInt64)] { ticks.withLock { $0 } }
    }

    @Test func schedulesStartOnTheNextMultipleOfTheirInterval() {
        #expect(MixClock.alignedStart(now: 0, interval: 20_000_000) == 0)
        #expect(MixClock.alignedStart(now: 40_000_000, interval: 20_000_000) == 40_000_000)
        #expect(MixClock.alignedStart(now: 40_000_001, interval: 20_000_000) == 60_000_000)
        #expect(MixClock.alignedStart(now: 59_999_999, interval: 20_000_000) == 60_000_000)
        #expect(MixClock.alignedStart(now: 100, interval: 33_333_333) == 33_333_333)
        #expect(MixClock.alignedStart(now: 5, interval: 1) == 5)
    }

    @Test func aShiftMovesTheTicksNotYetDeliveredAndKeepsTheirIndices() async throws {
        let clock = MixClock()
        let recorder = Recorder()
        // Long enough that a busy machine does not make the clock skip ticks (it would, more than one behind).
        let interval: UInt64 = 40_000_000
        let start = MixClock.nextAlignedInstant(interval: interval) + 200_000_000
        let token = clock.schedule(intervalNanoseconds: interval, start: start) { recorder.record($0) }
        #expect(clock.nextDeadline(token) == start)
        clock.shift(token, byNanoseconds: 7_000_000)
        #expect(clock.nextDeadline(token) == start + 7_000_000)
        clock.shift(token, byNanoseconds: -2_500_000)
        #expect(clock.nextDeadline(token) == start + 4_500_000)
        await eventually { recorder.snapshot.count >= 3 }
        clock.shift(token, byNanoseconds: 3_000_000)
        let shiftedAfter = try #require(recorder.snapshot.last).tick
        await eventually { recorder.snapshot.count >= 8 }
        clock.cancel(token)
        // The first eight: a test task starved by the other suites may look much later, by when a clock thread
        // starved too has rightly skipped ticks (it does when more than one behind).
        let ticks = Array(recorder.snapshot.prefix(8))
        // Consecutive, none repeated, none skipped; none before its deadline as shifted at the time.
        #expect(ticks.map(\.tick) == Array(0..<Int64(ticks.count)))
        #expect(ticks.allSatisfy { $0.nanos >= start + 4_500_000 + UInt64($0.tick) * interval })
        #expect(
            ticks.filter { $0.tick > shiftedAfter + 1 }.allSatisfy {
                $0.nanos >= start + 7_500_000 + UInt64($0.tick) * interval
            })
        #expect(clock.nextDeadline(token) == nil)
    }

    @Test func aGivenStartIsWhereTickZeroIsDue() async throws {
        // A room's audio and video count from one instant, so their tick times mean the same thing.
        let clock = MixClock()
        let recorder = Recorder()
        let start = MixClock.nextAlignedInstant(interval: 20_000_000) + 100_000_000
        let token = clock.schedule(intervalNanoseconds: 10_000_000, start: start) { recorder.record($0) }
        await eventually { recorder.snapshot.count >= 3 }
        clock.cancel(token)
        let first = try #require(recorder.snapshot.first)
        #expect(first.nanos >= start)
        #expect(recorder.snapshot.allSatisfy { $0.nanos >= start + UInt64($0.tick) * 10_000_000 })
    }

    @Test func noTickArrivesBeforeItsAlignedDeadline() async throws {
        let clock = MixClock()
        let interval: UInt64 = 20_000_000
        let recorder = Recorder()
        let before = monotonicNanoseconds()
        let token = clock.schedule(intervalNanoseconds: interval) { recorder.record($0) }
        await eventually { recorder.snapshot.count >= 5 }
        clock.cancel(token)
        let start = MixClock.alignedStart(now: before, interval: interval)
        let ticks = recorder.snapshot
        #expect(!ticks.isEmpty)
        #expect(ticks.allSatisfy { $0.nanos >= start + UInt64($0.tick) * interval })
    }

    @Test func ticksArriveInOrderAtTheInterval() async throws {
        let clock = MixClock()
        let recorder = Recorder()
        let token = clock.schedule(intervalNanoseconds: 10_000_000) { recorder.record($0) }
        await eventually { recorder.snapshot.count >= 50 }
        clock.cancel(token)

        let ticks = recorder.snapshot
        #expect(ticks.count >= 50)
        guard let first = ticks.first, let last = ticks.last, ticks.count >= 2 else { return }
        // From 0 and consecutive, except for ticks the clock reports as skipped (only when the machine stalls:
        // then indices jump so that tick × interval stays the time since registration).
        let gaps = zip(ticks, ticks.dropFirst()).map { $1.tick - $0.tick }
        #expect(gaps.allSatisfy { $0 >= 1 })
        #expect(Int(first.tick + gaps.reduce(0) { $0 + ($1 - 1) }) == clock.skippedTicks)
        let average = Double(last.nanos - first.nanos) / Double(last.tick - first.tick)
        #expect(abs(average - 10_000_000) < 2_000_000, "average interval \(average) ns")
    }

    @Test func cancelStopsTicks() async throws {
        let clock = MixClock()
        let recorder = Recorder()
        let token = clock.schedule(intervalNanoseconds: 5_000_000) { recorder.record($0) }
        await eventually { !recorder.snapshot.isEmpty }
        clock.cancel(token)
        let count = recorder.snapshot.count
        #expect(count > 0)
        try await Task.sleep(for: .milliseconds(60))
        #expect(recorder.snapshot.count == count)
    }

    @Test func oneClockDrivesSeveralSchedules() async throws {
        let clock = MixClock()
        let fast = Recorder(), slow = Recorder()
        let a = clock.schedule(intervalNanoseconds: 10_000_000) { fast.record($0) }
        let b = clock.schedule(intervalNanoseconds: 20_000_000) { slow.record($0) }
        await eventually { (fast.snapshot.last?.tick ?? 0) >= 20 && (slow.snapshot.last?.tick ?? 0) >= 10 }
        clock.cancel(a)
        clock.cancel(b)
        let f = fast.snapshot.last?.tick ?? 0, s = slow.snapshot.last?.tick ?? 0
        #expect(f >= 20 && s >= 10)
        // Both run on the same absolute timeline: the fast one's index is about twice the slow one's.
        #expect(abs(Double(f) / Double(max(1, s)) - 2) < 0.3)
    }

    @Test func aHandlerMayCancelItself() async throws {
        let clock = MixClock()
        let recorder = Recorder()
        let token = Mutex<MixClock.Token?>(nil)
        token.withLock { slot in
            slot = clock.schedule(intervalNanoseconds: 2_000_000) { tick in
                recorder.record(tick)
                if tick >= 2, let t = token.withLock({ $0 }) { clock.cancel(t) }
            }
        }
        await eventually { recorder.snapshot.contains { $0.tick >= 2 } }
        try await Task.sleep(for: .milliseconds(20))
        // Exactly one tick at or past 2 (the one that cancelled), none after it.
        let ticks = recorder.snapshot.map(\.tick)
        #expect(ticks.filter { $0 >= 2 }.count == 1)
        #expect(ticks.last.map { $0 >= 2 } == true)
    }

    @Test func aScheduleCancelledByAnotherHandlerOfTheSameInstantDoesNotFire() async throws {
        let clock = MixClock()
        let victim = Recorder()
        let victimToken = Mutex<MixClock.Token?>(nil)
        let cancelledAt = Mutex<Int?>(nil)
        // Same interval, registered together: both are due at the same instants, the canceller first.
        let canceller = clock.schedule(intervalNanoseconds: 50_000_000) { tick in
            guard tick >= 1, let t = victimToken.withLock({ $0 }) else { return }
            clock.cancel(t)
            cancelledAt.withLock { $0 = $0 ?? victim.snapshot.count }
        }
        victimToken.withLock { $0 = clock.schedule(intervalNanoseconds: 50_000_000) { victim.record($0) } }
        await eventually { cancelledAt.withLock { $0 } != nil }
        try await Task.sleep(for: .milliseconds(100))
        clock.cancel(canceller)
        let count = try #require(cancelledAt.withLock { $0 })
        #expect(victim.snapshot.count == count)
    }

    @Test func aParkedScheduleGetsNoTicksAndResumesAtTheTickDueNowWithoutCountingSkips() async throws {
        let clock = MixClock()
        let recorder = Recorder()
        let token = clock.schedule(intervalNanoseconds: 10_000_000) { recorder.record($0) }
        await eventually { !recorder.snapshot.isEmpty }
        clock.park([token])
        let parkedAt = recorder.snapshot.count
        try await Task.sleep(for: .milliseconds(150))
        // At most one tick that was already running when `park` was called.
        #expect(recorder.snapshot.count <= parkedAt + 1)
        let before = recorder.snapshot.last?.tick ?? 0
        let skipped = clock.skippedTicks
        clock.unpark([token])
        await eventually { (recorder.snapshot.last?.tick ?? 0) > before }
        clock.cancel(token)
        let after = recorder.snapshot.drop { $0.tick <= before }
        let first = try #require(after.first)
        // 150 ms parked at 10 ms a tick: the count went on, and the missed ticks were not delivered.
        #expect(first.tick >= before + 14)
        // (Not counted as skipped: a busy test machine may still make the clock skip a tick or two of its own.)
        #expect(clock.skippedTicks - skipped < 5)
    }
}
