import Testing
@testable import Rooms

/// The webhook retry schedule and queue bound, driven with injected time.
@Suite struct WebhookQueueTests {
    static func delivery(_ n: Int) -> WebhookDelivery { WebhookDelivery(id: "e\(n)", body: Array("{\"n\":\(n)}".utf8)) }

    /// Sends until the queue says wait or idle; each attempt lasts `durationMs` and fails.
    static func failUntilGivenUp(_ queue: inout WebhookQueue, durationMs: Int64) -> [Int64] {
        var starts: [Int64] = []
        var now: Int64 = 0
        while true {
            switch queue.next(nowMs: now) {
            case .send:
                starts.append(now)
                now += durationMs
                if case .gaveUp = queue.finish(success: false, nowMs: now) { return starts }
            case let .wait(until):
                now = until
            case .idle:
                return starts
            }
        }
    }

    @Test func delaysDoubleFromHalfASecondUpToSixteen() {
        let policy = WebhookRetryPolicy.standard
        #expect(
            (1...9).map { policy.delayMs(afterFailure: $0) } == [
                500, 1000, 2000, 4000, 8000, 16_000, 16_000, 16_000, 16_000,
            ])
        #expect(policy.delayMs(afterFailure: 1_000_000) == 16_000)
    }

    @Test func aDeliveryThatAlwaysFailsIsTriedForSixtySecondsThenGivenUp() {
        var queue = WebhookQueue()
        queue.enqueue(Self.delivery(1))
        let starts = Self.failUntilGivenUp(&queue, durationMs: 0)
        // The next retry would start at 63.5 s, more than 60 s after the first attempt.
        #expect(starts == [0, 500, 1500, 3500, 7500, 15_500, 31_500, 47_500])
        #expect(queue.counts == .init(delivered: 0, failed: 1, dropped: 0))
        #expect(queue.isEmpty)
    }

    @Test func slowAttemptsCountTowardsTheSixtySeconds() {
        var queue = WebhookQueue()
        queue.enqueue(Self.delivery(1))
        // Each attempt times out after 10 s; the wait starts when the attempt ended.
        #expect(Self.failUntilGivenUp(&queue, durationMs: 10_000) == [0, 10_500, 21_500, 33_500, 47_500])
        #expect(queue.counts.failed == 1)
    }

    @Test func aRetryKeepsTheEventIdAndCountsItsAttempts() {
        var queue = WebhookQueue()
        queue.enqueue(Self.delivery(1))
        guard case let .send(first) = queue.next(nowMs: 1000) else {
            Issue.record("expected a send")
            return
        }
        #expect(first.id == "e1" && first.attempts == 1 && first.firstAttemptMs == 1000)
        #expect(queue.next(nowMs: 1001) == .idle)  // one attempt in flight at a time
        #expect(queue.finish(success: false, nowMs: 1020) == .retry(atMs: 1520))
        #expect(queue.next(nowMs: 1519) == .wait(untilMs: 1520))
        guard case let .send(second) = queue.next(nowMs: 1520) else {
            Issue.record("expected a retry")
            return
        }
        #expect(second.id == "e1" && second.body == first.body && second.attempts == 2 && second.firstAttemptMs == 1000)
        #expect(queue.finish(success: true, nowMs: 1530) == .delivered)
        #expect(queue.counts == .init(delivered: 1, failed: 0, dropped: 0))
        #expect(queue.next(nowMs: 1531) == .idle)
    }

    @Test func deliveriesLeaveInOrderAndAFailingHeadHoldsTheRestBack() {
        var queue = WebhookQueue()
        for n in 1...3 { queue.enqueue(Self.delivery(n)) }
        var sent: [String] = []
        var now: Int64 = 0
        // e1 fails twice, then everything succeeds.
        var failuresLeft = 2
        while !queue.isEmpty {
            switch queue.next(nowMs: now) {
            case let .send(d):
                sent.append("\(d.id)#\(d.attempts)")
                let ok = failuresLeft == 0
                if !ok { failuresLeft -= 1 }
                queue.finish(success: ok, nowMs: now)
            case let .wait(until): now = until
            case .idle:
                Issue.record("idle with work queued")
                return
            }
        }
        #expect(sent == ["e1#1", "e1#2", "e1#3", "e2#1", "e3#1"])
        #expect(now == 1500)
    }

    @Test func aFullQueueDropsNewEventsAndCountsThem() {
        var queue = WebhookQueue(capacity: 3)
        #expect((1...5).map { queue.enqueue(Self.delivery($0)) } == [true, true, true, false, false])
        #expect(queue.count == 3)
        #expect(queue.counts == .init(delivered: 0, failed: 0, dropped: 2))
        // The one in flight still takes a place; once it is delivered there is room again.
        guard case .send = queue.next(nowMs: 0) else {
            Issue.record("expected a send")
            return
        }
        let sixth = queue.enqueue(Self.delivery(6))
        #expect(!sixth)
        queue.finish(success: true, nowMs: 0)
        let seventh = queue.enqueue(Self.delivery(7))
        #expect(seventh)
        var ids: [String] = []
        while case let .send(d) = queue.next(nowMs: 0) {
            ids.append(d.id)
            queue.finish(success: true, nowMs: 0)
        }
        #expect(ids == ["e2", "e3", "e7"])
        #expect(queue.counts == .init(delivered: 4, failed: 0, dropped: 3))
    }

    @Test func aLongRunStaysBoundedAndInOrder() {
        var queue = WebhookQueue(capacity: 1000)
        var next = 0
        var delivered: [Int] = []
        for round in 0..<50 {
            for _ in 0..<100 { if queue.enqueue(Self.delivery(next)) { next += 1 } }
            for _ in 0..<(round % 2 == 0 ? 100 : 0) {
                guard case let .send(d) = queue.next(nowMs: 0) else { break }
                delivered.append(Int(d.id.dropFirst()) ?? -1)
                queue.finish(success: true, nowMs: 0)
            }
            #expect(queue.count <= 1000)
        }
        #expect(delivered == Array(0..<delivered.count))
        // Full after round 19; from then on each pair of rounds drops 100 and delivers 100.
        #expect(queue.counts == .init(delivered: 2500, failed: 0, dropped: 1500))
        #expect(queue.count == 1000)
    }
}
