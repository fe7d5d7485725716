import Foundation

/// The one scheduler for every room: a dedicated thread sleeping until the earliest absolute deadline.
///
/// Like GStreamer's aggregator, the clock lives here and only here: handlers are told "tick k is due" and
/// take whatever their inputs have. Deadlines are absolute, `deadline_k = start + k × interval` on the
/// monotonic clock, so no drift accumulates. `start` is by default the first multiple of the interval at or
/// after the registration (tick 0 is due within one interval): schedules of one interval tick at the same
/// instants, so the thread wakes once per instant for every room, not once per room (with 50 rooms registered
/// at different times it woke 2,500 times a second for their audio alone). Schedules whose timestamps must
/// agree (a room's audio and video) are given one explicit `start`.
/// When the thread falls more than one interval behind (machine stalled, a handler was slow), the missed
/// ticks are skipped and counted in `skippedTicks`, and only the most recent due tick is delivered:
/// indices then jump, so `tick × interval` keeps equalling the time since `start` (timestamps derived
/// from it stay aligned with real time). Otherwise indices are consecutive.
///
/// The thread exists only while something is scheduled. Internally locked: every method may be called from
/// any thread, including from inside a handler.
public final class MixClock: @unchecked Sendable {  // all mutable state is guarded by `condition`
    /// Identifies one schedule, for `cancel`.
    public struct Token: Hashable, Sendable {
        let id: UInt64
    }

    /// A handler in a box: the batch below holds references to these. A bare closure put in an array of tuples
    /// is re-abstracted, and that allocated a context for every tick of every room.
    private final class Handler: Sendable {
        let call: @Sendable (Int64) -> Void
        init(_ call: @escaping @Sendable (Int64) -> Void) { self.call = call }
    }

    private struct Entry {
        let id: UInt64
        /// Moved by `shift`, so where tick k falls can follow a room's pictures (see `CanvasPhase`).
        var start: UInt64
        let interval: UInt64
        var next: Int64
        let handler: Handler
        /// Not called and not waited for until unparked (an idle room).
        var parked = false

        func deadline(_ k: Int64) -> UInt64 { start &+ UInt64(k) &* interval }
    }

    public static let shared = MixClock()

    private let condition = MonotonicCondition()
    private var entries: [Entry] = []
    private var nextId: UInt64 = 0
    private var threadRunning = false
    private var skipped = 0
    /// The entry whose handler is running on the clock thread now, so `cancel` can wait for it to finish.
    private var running: UInt64?
    /// Counts `cancel` and `park` calls: a batch of due ticks checks its entries again only when it changed.
    private var changes: UInt64 = 0
    /// The ticks due at one instant (clock thread only; storage reused).
    private var due: [(id: UInt64, tick: Int64, handler: Handler)] = []
    private var clockThread: Thread?

    public init() {}

    /// Calls `handler(tick)` on the clock thread with tick = 0, 1, 2, … counted from `start` (a monotonic
    /// instant from `nextAlignedInstant`; by default the next multiple of the interval), every
    /// `intervalNanoseconds` (at least 1 ms is sensible; 0 is treated as 1 ns). The handler must be cheap:
    /// hop to the room's own queue for the real work.
    @discardableResult
    public func schedule(
        intervalNanoseconds: UInt64, start: UInt64? = nil,
        handler: @escaping @Sendable (Int64) -> Void
    ) -> Token {
        condition.lock()
        defer { condition.unlock() }
        nextId += 1
        let interval = max(1, intervalNanoseconds)
        let first = start ?? Self.alignedStart(now: monotonicNanoseconds(), interval: interval)
        entries.append(Entry(id: nextId, start: first, interval: interval, next: 0, handler: Handler(handler)))
        if !threadRunning {
            threadRunning = true
            let thread = Thread { [self] in run() }
            thread.name = "cohost-mixclock"
            thread.qualityOfService = .userInteractive
            clockThread = thread
            thread.start()
        }
        condition.broadcast()
        return Token(id: nextId)
    }

    /// Stops a schedule. When called from another thread, returns only once a tick of it that is running now
    /// has finished, so no handler runs after `cancel` returns. Unknown tokens are ignored.
    public func cancel(_ token: Token) {
        condition.lock()
        defer { condition.unlock() }
        entries.removeAll { $0.id == token.id }
        changes &+= 1
        while running == token.id, Thread.current !== clockThread {
            condition.wait()
        }
        condition.broadcast()
    }

    /// Stops calling these schedules' handlers and waking for them until `unpark` (a room with nothing to do:
    /// with every schedule parked the thread sleeps until something changes). Their tick count goes on.
    public func park(_ tokens: [Token]) {
        condition.lock()
        defer { condition.unlock() }
        for i in entries.indices where tokens.contains(Token(id: entries[i].id)) { entries[i].parked = true }
        changes &+= 1
    }

    /// Resumes parked schedules: the first tick delivered is the one due now (the ones that fell due while
    /// parked are neither delivered nor counted as skipped).
    public func unpark(_ tokens: [Token]) {
        condition.lock()
        defer { condition.unlock() }
        let now = monotonicNanoseconds()
        for i in entries.indices where entries[i].parked && tokens.contains(Token(id: entries[i].id)) {
            entries[i].parked = false
            if now >= entries[i].start {
                entries[i].next = max(entries[i].next, Int64((now - entries[i].start) / entries[i].interval))
            }
        }
        condition.broadcast()
    }

    /// Moves a schedule's ticks not yet delivered by `nanoseconds` (negative: earlier); indices stay consecutive.
    /// A room's canvas clock follows where its pictures arrive this way; for tick timestamps to keep meaning
    /// real time, whoever shifts a schedule adds the sum of its shifts to them. A shift shorter than the interval
    /// neither repeats nor skips a tick. Unknown tokens are ignored.
    public func shift(_ token: Token, byNanoseconds nanoseconds: Int64) {
        condition.lock()
        defer { condition.unlock() }
        guard let i = entries.firstIndex(where: { $0.id == token.id }) else { return }
        entries[i].start = entries[i].start &+ UInt64(bitPattern: nanoseconds)
        // Earlier: the thread may be sleeping past the new deadline.
        condition.broadcast()
    }

    /// When the next tick of a schedule not yet delivered is due (nil: unknown token).
    func nextDeadline(_ token: Token) -> UInt64? {
        condition.lock()
        defer { condition.unlock() }
        return entries.first { $0.id == token.id }.map { $0.deadline($0.next) }
    }

    /// The next multiple of `interval` on the monotonic clock: a `start` for schedules that must tick in phase.
    public static func nextAlignedInstant(interval: UInt64) -> UInt64 {
        alignedStart(now: monotonicNanoseconds(), interval: max(1, interval))
    }

    /// The first multiple of `interval` at or after `now`: where a schedule registered at `now` starts.
    static func alignedStart(now: UInt64, interval: UInt64) -> UInt64 {
        let (quotient, remainder) = now.quotientAndRemainder(dividingBy: interval)
        return remainder == 0 ? now : (quotient + 1) &* interval
    }

    /// Ticks skipped because the clock fell behind, over all schedules since this clock was created.
    public var skippedTicks: Int {
        condition.lock()
        defer { condition.unlock() }
        return skipped
    }

    /// The clock thread: fire what is due, sleep until the earliest deadline, exit when nothing is scheduled.
    /// One pass collects every tick due now (schedules of one interval are due together), then fires them in
    /// order with the lock released; a schedule cancelled or parked meanwhile is left out.
    private func run() {
        condition.lock()
        while true {
            guard !entries.isEmpty else {
                threadRunning = false
                clockThread = nil
                condition.unlock()
                return
            }
            let now = monotonicNanoseconds()
            var earliest = UInt64.max
            due.removeAll(keepingCapacity: true)
            for i in entries.indices where !entries[i].parked {
                let deadline = entries[i].deadline(entries[i].next)
                guard deadline <= now else {
                    earliest = min(earliest, deadline)
                    continue
                }
                // Fall more than a whole interval behind → skip to the latest due tick instead of bursting.
                let behind = Int64(min((now - deadline) / entries[i].interval, UInt64(Int64.max / 2)))
                skipped += Int(behind)
                let tick = entries[i].next + behind
                entries[i].next = tick + 1
                due.append((entries[i].id, tick, entries[i].handler))
            }
            guard !due.isEmpty else {
                if earliest == .max { condition.wait() } else { condition.wait(untilNanoseconds: earliest) }
                continue
            }
            let seen = changes
            for (id, tick, handler) in due {
                if changes != seen, !entries.contains(where: { $0.id == id && !$0.parked }) { continue }
                running = id
                condition.unlock()
                handler.call(tick)
                condition.lock()
                running = nil
                condition.broadcast()
            }
            due.removeAll(keepingCapacity: true)
        }
    }
}
