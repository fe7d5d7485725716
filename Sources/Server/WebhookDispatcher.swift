import Foundation
import Logging
import Metrics
import Rooms
import Clocks
import Publishing

/// POSTs every room event to each configured webhook URL (protocol/webhooks.md).
///
/// Publishing only appends to a bounded per-URL `WebhookQueue` under a lock and wakes that URL's
/// worker task, so a room or HTTP handler never waits for a receiver. Each worker sends its queue in
/// order, one request at a time, and retries failures on the queue's schedule. Results are counted in
/// `cohost_webhook_deliveries_total{result="ok|failed|dropped"}`.
public final class WebhookDispatcher: RoomEventSink, @unchecked Sendable {
    /// What to deliver where, and how hard to try.
    public struct Configuration: Sendable {
        public var urls: [URL]
        /// The webhook secret the deliveries are signed with (`webhook_secret`; never an API key's).
        public var secret: String
        public var queueCapacity: Int
        public var retry: WebhookRetryPolicy
        public var requestTimeoutSeconds: Double
        /// Where deliveries may go, checked on the resolved address before every attempt (`webhook_hosts`).
        public var destinations: DestinationPolicy

        public init(
            urls: [URL], secret: String, queueCapacity: Int = 1000,
            retry: WebhookRetryPolicy = .standard, requestTimeoutSeconds: Double = 10,
            destinations: DestinationPolicy = DestinationPolicy(setting: "webhook_hosts")
        ) {
            self.destinations = destinations
            self.urls = urls
            self.secret = secret
            self.queueCapacity = queueCapacity
            self.retry = retry
            self.requestTimeoutSeconds = requestTimeoutSeconds
        }
    }

    public let configuration: Configuration
    private let targets: [Target]
    private let logger: Logger
    private let journal: (any WebhookJournal)?
    /// Journal writes, in the order their deliveries were queued and finished, off the publisher's thread.
    private let journalQueue = DispatchQueue(label: "cohost.webhooks.journal")

    /// `journal`: where deliveries not yet acknowledged outlive the process (the room store); those a previous run
    /// left are queued again now, before any new event, each under its own event id.
    public init(configuration: Configuration, logger: Logger, journal: (any WebhookJournal)? = nil) {
        self.configuration = configuration
        self.logger = logger
        self.journal = journal
        let sender = WebhookSender(
            timeoutSeconds: configuration.requestTimeoutSeconds, destinations: configuration.destinations)
        let journalQueue = self.journalQueue
        targets = configuration.urls.map { url in
            Target(
                url: url, queue: WebhookQueue(capacity: configuration.queueCapacity, policy: configuration.retry),
                sender: sender, secret: configuration.secret, logger: logger
            ) { id in
                guard let journal else { return }
                journalQueue.async {
                    do { try journal.removeDelivery(url: url.absoluteString, id: id) } catch {
                        logger.warning("webhook journal failed", metadata: ["error": "\(error)"])
                    }
                }
            }
        }
        guard let journal else { return }
        do {
            var resumed = 0
            for old in try journal.pendingDeliveries() {
                if let target = targets.first(where: { $0.url.absoluteString == old.url }) {
                    if target.enqueue(WebhookDelivery(id: old.id, body: old.body)) { resumed += 1 }
                } else {
                    // A URL no longer configured: nobody to deliver to.
                    try journal.removeDelivery(url: old.url, id: old.id)
                }
            }
            if resumed > 0 { logger.info("webhook deliveries resumed", metadata: ["deliveries": "\(resumed)"]) }
        } catch {
            logger.error("webhook journal could not be read", metadata: ["error": "\(error)"])
        }
    }

    deinit { stop() }

    /// Queues `eventJSON` for every URL under one fresh event id; never blocks.
    public func receive(eventJSON: String, room: String) {
        let delivery = WebhookDelivery(id: UUID().uuidString.lowercased(), body: Array(eventJSON.utf8))
        for target in targets where target.enqueue(delivery) {
            guard let journal else { continue }
            let entry = JournaledDelivery(url: target.url.absoluteString, id: delivery.id, body: delivery.body)
            journalQueue.async { [logger] in
                do { try journal.recordDelivery(entry) } catch {
                    logger.warning("webhook journal failed", metadata: ["error": "\(error)"])
                }
            }
        }
    }

    /// Totals over every URL since start.
    public var counts: WebhookQueue.Counts {
        targets.reduce(into: WebhookQueue.Counts()) { sum, t in
            let c = t.counts
            sum.delivered += c.delivered
            sum.failed += c.failed
            sum.dropped += c.dropped
        }
    }

    /// Deliveries not yet finished (in flight or waiting), over every URL.
    public var pending: Int { targets.reduce(0) { $0 + $1.pending } }

    /// Waits until every queue is empty or `timeout` seconds passed (shutdown: the last events,
    /// `room_closed` among them, get a bounded chance to leave). Returns whether all were finished.
    @discardableResult
    public func drain(timeout: Double) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while pending > 0 && Date() < deadline {
            try? await Task.sleep(for: .milliseconds(50))
        }
        return pending == 0
    }

    /// Stops the workers; what is still queued is abandoned here (and stays in the journal, when there is one).
    public func stop() {
        for target in targets { target.stop() }
        journalQueue.sync {}
    }
}

/// One URL: its queue, its worker task and the wake-up signal between them.
private final class Target: @unchecked Sendable {
    let url: URL
    private let lock = NSLock()
    private var queue: WebhookQueue
    private let wake: AsyncStream<Void>.Continuation
    private var worker: Task<Void, Never>?

    /// `finished`: called with the event id once a delivery is acknowledged or given up.
    init(
        url: URL, queue: WebhookQueue, sender: WebhookSender, secret: String, logger: Logger,
        finished: @escaping @Sendable (String) -> Void
    ) {
        self.url = url
        self.queue = queue
        let (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        self.wake = wake
        worker = Task { [weak self] in
            var wakeups = wakes.makeAsyncIterator()
            while !Task.isCancelled {
                guard let action = self?.next() else { return }
                switch action {
                case .idle:
                    // A wake-up that came while sending is buffered (newest 1), so none is lost.
                    guard await wakeups.next() != nil else { return }
                case let .wait(untilMs):
                    try? await Task.sleep(for: .milliseconds(max(1, untilMs - MonotonicClock.nowMs())))
                case let .send(delivery):
                    let result = await sender.send(delivery, to: url, secret: secret)
                    guard let self else { return }
                    let outcome = self.finish(success: result.isSuccess)
                    Self.report(outcome, delivery: delivery, result: result, url: url, logger: logger)
                    if outcome == .delivered || outcome == .gaveUp { finished(delivery.id) }
                }
            }
        }
    }

    /// False when the queue was full and the delivery dropped.
    @discardableResult
    func enqueue(_ delivery: WebhookDelivery) -> Bool {
        let accepted = lock.withLock { queue.enqueue(delivery) }
        if accepted {
            wake.yield()
        } else {
            WebhookMetrics.dropped.increment()
        }
        return accepted
    }

    var counts: WebhookQueue.Counts { lock.withLock { queue.counts } }
    var pending: Int { lock.withLock { queue.count } }

    func stop() {
        worker?.cancel()
        wake.finish()
    }

    private func next() -> WebhookQueue.Action { lock.withLock { queue.next(nowMs: MonotonicClock.nowMs()) } }

    private func finish(success: Bool) -> WebhookQueue.Outcome {
        lock.withLock { queue.finish(success: success, nowMs: MonotonicClock.nowMs()) }
    }

    private static func report(
        _ outcome: WebhookQueue.Outcome, delivery: WebhookDelivery, result: WebhookSender.Result,
        url: URL, logger: Logger
    ) {
        let metadata: Logger.Metadata = [
            "url": "\(redacted(url))", "eventId": "\(delivery.id)",
            "attempt": "\(delivery.attempts)", "result": "\(result)",
        ]
        switch outcome {
        case .delivered:
            WebhookMetrics.ok.increment()
        case .retry:
            logger.debug("webhook delivery failed, will retry", metadata: metadata)
        case .gaveUp:
            WebhookMetrics.failed.increment()
            logger.warning("webhook delivery given up", metadata: metadata)
        }
    }

    /// Scheme, host and path only: query strings and user info may carry credentials.
    static func redacted(_ url: URL) -> String {
        "\(url.scheme ?? "?")://\(url.host ?? "?")\(url.port.map { ":\($0)" } ?? "")\(url.path)"
    }
}

enum WebhookMetrics {
    static let label = "cohost_webhook_deliveries_total"
    static var ok: Counter { Counter(label: label, dimensions: [("result", "ok")]) }
    static var failed: Counter { Counter(label: label, dimensions: [("result", "failed")]) }
    static var dropped: Counter { Counter(label: label, dimensions: [("result", "dropped")]) }
}
