import Testing
import Foundation
import Dispatch
@testable import Rooms

/// The clock → room-queue hand-off of every tick (hot path: no allocation per tick).
@Suite("TickRelay")
struct TickRelayTests {
    /// Collects what the handler saw (appended on the relay's queue, read after it has caught up).
    final class Seen: @unchecked Sendable {
        let lock = NSLock()
        var ticks: [Int64] = []
        var onQueue = true
    }

    /// Waits (up to 5 s) until the relay has handed out everything and the handler has seen `count` ticks.
    private func waitFor(_ seen: Seen, count: Int, relay: TickRelay) {
        let end = Date().addingTimeInterval(5)
        while Date() < end, seen.lock.withLock({ seen.ticks.count }) < count || relay.backlog > 0 {
            usleep(1000)
        }
    }

    @Test("every posted tick reaches the handler once, on the room's queue, in posting order (indices may jump)")
    func ticksArriveInOrderOnTheQueue() {
        let queue = DispatchQueue(label: "test.relay")
        let key = DispatchSpecificKey<Int>()
        queue.setSpecific(key: key, value: 7)
        let seen = Seen()
        let relay = TickRelay(queue: queue) { tick in
            seen.lock.withLock {
                seen.ticks.append(tick)
                if DispatchQueue.getSpecific(key: key) != 7 { seen.onQueue = false }
            }
        }
        // The clock skips ticks when it falls behind: indices jump, the relay keeps them as posted.
        let posted: [Int64] = Array(0..<150) + [160, 161, 200] + Array(201..<250)
        let poster = Thread { for tick in posted { relay.post(tick) } }
        poster.start()
        waitFor(seen, count: posted.count, relay: relay)
        #expect(seen.lock.withLock { seen.ticks } == posted)
        #expect(seen.lock.withLock { seen.onQueue })
        relay.cancel()
    }

    @Test("the FIFO between clock and queue keeps one storage: its capacity is unchanged after a thousand ticks")
    func fifoStorageIsReused() {
        let queue = DispatchQueue(label: "test.relay.capacity")
        let seen = Seen()
        let relay = TickRelay(queue: queue) { tick in seen.lock.withLock { seen.ticks.append(tick) } }
        let capacity = relay.capacity
        #expect(capacity >= 64)
        seen.lock.withLock { seen.ticks.reserveCapacity(1000) }
        // Bursts of up to 32 ticks before the queue catches up (a busy room), then it drains.
        var next: Int64 = 0
        while next < 1000 {
            for _ in 0..<(Int(next) % 32 + 1) where next < 1000 {
                relay.post(next)
                next += 1
            }
            waitFor(seen, count: Int(next), relay: relay)
        }
        #expect(seen.lock.withLock { seen.ticks } == Array(0..<1000))
        #expect(relay.capacity == capacity)
        #expect(relay.backlog == 0)
        relay.cancel()
    }

    @Test("after cancel no tick reaches the handler")
    func cancelStopsTheHandler() {
        let queue = DispatchQueue(label: "test.relay.cancel")
        let seen = Seen()
        let relay = TickRelay(queue: queue) { tick in seen.lock.withLock { seen.ticks.append(tick) } }
        relay.post(1)
        waitFor(seen, count: 1, relay: relay)
        relay.cancel()
        relay.post(2)
        usleep(50_000)
        queue.sync {}
        #expect(seen.lock.withLock { seen.ticks } == [1])
    }
}
