import Foundation
import Dispatch

/// Hands tick indices from the clock thread to a room's queue without allocating.
///
/// Hot path: 50 audio ticks and `fps` video ticks a second per room. `queue.async { … }` cost three heap
/// allocations per tick (the closure context, its block copy, and libdispatch's continuation: those are cached
/// per thread and freed on the queue's threads, so the clock thread never gets one back). A user-data source is a
/// preallocated doorbell instead: ringing it schedules its handler on the queue, and the indices wait in a FIFO
/// whose storage is reused (it empties whenever the queue catches up). Ticks run in the order they were posted.
///
/// `@unchecked Sendable`: `pending` and `head` are guarded by `lock`; the handler runs on the target queue.
final class TickRelay: @unchecked Sendable {
    private let lock = NSLock()
    private var pending: [Int64] = []
    private var head = 0
    private let source: any DispatchSourceUserDataAdd

    /// `handler(tick)` runs on `queue` once per `post`, in posting order.
    init(queue: DispatchQueue, handler: @escaping (Int64) -> Void) {
        pending.reserveCapacity(64)
        source = DispatchSource.makeUserDataAddSource(queue: queue)
        source.setEventHandler { [weak self] in
            while let tick = self?.pop() { handler(tick) }
        }
        source.activate()
    }

    deinit { source.cancel() }

    /// Queues `tick` for the handler (any thread).
    func post(_ tick: Int64) {
        lock.withLock { pending.append(tick) }
        source.add(data: 1)
    }

    /// No handler runs for ticks posted from now on (one running now finishes).
    func cancel() { source.cancel() }

    /// Ticks posted and not yet handed to the handler.
    var backlog: Int { lock.withLock { pending.count - head } }

    /// The storage of the FIFO, for tests that pin its reuse.
    var capacity: Int { lock.withLock { pending.capacity } }

    private func pop() -> Int64? {
        lock.withLock {
            guard head < pending.count else { return nil }
            let tick = pending[head]
            head += 1
            // Caught up: start again at the front of the same storage.
            if head == pending.count {
                pending.removeAll(keepingCapacity: true)
                head = 0
            }
            return tick
        }
    }
}
