/// When a failed webhook delivery is tried again, and when it is given up.
///
/// After the n-th failed attempt the next one comes `initialDelayMs · 2^(n−1)` later (at most
/// `maxDelayMs`): 0.5 s, 1, 2, 4, 8, 16, 16 … by default. A retry that would start more than
/// `giveUpAfterMs` after the first attempt is not made: the delivery is dropped and counted as failed.
public struct WebhookRetryPolicy: Sendable, Equatable {
    public var initialDelayMs: Int64
    public var maxDelayMs: Int64
    public var giveUpAfterMs: Int64

    public init(initialDelayMs: Int64 = 500, maxDelayMs: Int64 = 16_000, giveUpAfterMs: Int64 = 60_000) {
        self.initialDelayMs = max(1, initialDelayMs)
        self.maxDelayMs = max(self.initialDelayMs, maxDelayMs)
        self.giveUpAfterMs = max(0, giveUpAfterMs)
    }

    /// The policy protocol/webhooks.md documents.
    public static let standard = WebhookRetryPolicy()

    /// The wait after the `failures`-th failed attempt (1-based).
    public func delayMs(afterFailure failures: Int) -> Int64 {
        var delay = initialDelayMs
        var n = 1
        // Doubling stops at the cap, so this never overflows however many failures there were.
        while n < failures && delay < maxDelayMs {
            delay *= 2
            n += 1
        }
        return min(delay, maxDelayMs)
    }
}

/// One event on its way to one webhook URL. The id is stable across retries (`X-Cohost-Event-Id`).
public struct WebhookDelivery: Sendable, Equatable {
    public let id: String
    /// The exact bytes sent and signed: the event's JSON text.
    public let body: [UInt8]
    /// Attempts started so far (1 for the first one).
    public fileprivate(set) var attempts = 0
    /// When the first attempt started (monotonic ms).
    public fileprivate(set) var firstAttemptMs: Int64?

    public init(id: String, body: [UInt8]) {
        self.id = id
        self.body = body
    }
}

/// The deliveries waiting for one webhook URL, in order, with the retry schedule: pure state with
/// injected time, so the dispatcher around it only does I/O and sleeping.
///
/// One delivery is attempted at a time, oldest first, so a receiver sees the events of a URL in order;
/// a failing head holds the rest back until it succeeds or is given up. At most `capacity` deliveries
/// wait (the one being attempted included): an event arriving at a full queue is dropped and counted.
public struct WebhookQueue: Sendable {
    /// What the sender should do now.
    public enum Action: Sendable, Equatable {
        /// Attempt this delivery and report the result with `finish`.
        case send(WebhookDelivery)
        /// The head is waiting for its retry time.
        case wait(untilMs: Int64)
        /// Nothing to send (empty, or an attempt is in flight).
        case idle
    }

    /// What became of an attempt.
    public enum Outcome: Sendable, Equatable {
        case delivered
        case retry(atMs: Int64)
        /// Retried for `giveUpAfterMs` without success: dropped.
        case gaveUp
    }

    /// Running totals since the queue was made.
    public struct Counts: Sendable, Equatable {
        public var delivered = 0
        /// Given up after retrying.
        public var failed = 0
        /// Refused because the queue was full.
        public var dropped = 0
        public init(delivered: Int = 0, failed: Int = 0, dropped: Int = 0) {
            self.delivered = delivered
            self.failed = failed
            self.dropped = dropped
        }
    }

    public let capacity: Int
    public let policy: WebhookRetryPolicy
    public private(set) var counts = Counts()
    /// Pending deliveries from `head` on; the consumed prefix is compacted away now and then.
    private var items: [WebhookDelivery] = []
    private var head = 0
    private var retryAtMs: Int64?
    private var inFlight = false

    public init(capacity: Int = 1000, policy: WebhookRetryPolicy = .standard) {
        self.capacity = max(1, capacity)
        self.policy = policy
    }

    /// Deliveries waiting, the one in flight included.
    public var count: Int { items.count - head }
    public var isEmpty: Bool { count == 0 }

    /// Queues a delivery; false (and counted as dropped) when the queue is full.
    @discardableResult
    public mutating func enqueue(_ delivery: WebhookDelivery) -> Bool {
        guard count < capacity else {
            counts.dropped += 1
            return false
        }
        items.append(delivery)
        return true
    }

    /// The next step at `nowMs`. `.send` marks the head in flight until `finish` is called.
    public mutating func next(nowMs: Int64) -> Action {
        guard !inFlight, head < items.count else { return .idle }
        if let retryAtMs, nowMs < retryAtMs { return .wait(untilMs: retryAtMs) }
        retryAtMs = nil
        inFlight = true
        items[head].attempts += 1
        if items[head].firstAttemptMs == nil { items[head].firstAttemptMs = nowMs }
        return .send(items[head])
    }

    /// Reports the in-flight attempt's result at `nowMs` (when it ended).
    @discardableResult
    public mutating func finish(success: Bool, nowMs: Int64) -> Outcome {
        guard inFlight, head < items.count else { return .gaveUp }
        inFlight = false
        let delivery = items[head]
        if success {
            counts.delivered += 1
            popHead()
            return .delivered
        }
        let at = nowMs + policy.delayMs(afterFailure: delivery.attempts)
        if at - (delivery.firstAttemptMs ?? nowMs) > policy.giveUpAfterMs {
            counts.failed += 1
            popHead()
            return .gaveUp
        }
        retryAtMs = at
        return .retry(atMs: at)
    }

    private mutating func popHead() {
        head += 1
        retryAtMs = nil
        // Compact once the consumed prefix is as large as what is left: amortised O(1) per delivery.
        if head >= 64 && head * 2 >= items.count {
            items.removeFirst(head)
            head = 0
        }
    }
}
