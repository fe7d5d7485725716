import Foundation
import Logging

/// The state an output shares between its callers and its worker thread: queue, headers, state and
/// counters, all behind one condition lock. Callers only ever hold the lock briefly, so `send` never
/// blocks on I/O; the worker waits on the condition for tags, backoff ends and stop requests.
///
/// `@unchecked Sendable`: every mutable field is read and written with `condition` held.
final class OutputCore: @unchecked Sendable {
    /// How long `stop` lets the worker flush the queue before closing.
    static let flushSeconds = 2.0

    let logger: Logger
    let options: OutputOptions
    let onKeyframeNeeded: KeyframeRequestHandler
    private let onStateChange: OutputStateHandler
    private let condition = NSCondition()
    /// Held while a state changes and its handler runs, so handlers see changes in order even when
    /// `stop` (caller thread) and the worker change state at the same moment. Recursive so a handler
    /// may read state or stats.
    private let notifyLock = NSRecursiveLock()
    private var queue: TagQueue
    private var headers: [FLVTag] = []
    private var current: OutputStateChange
    private var counters = OutputStats()
    private var started = false
    private var stopDeadline: Date?
    private var finished = false
    /// The socket the worker is blocked on, if any: `stop` shuts it down when a write hangs past the deadline.
    private var activeSocket: Int32 = -1

    init(
        logger: Logger, options: OutputOptions, initial: OutputStateChange,
        onKeyframeNeeded: @escaping KeyframeRequestHandler, onStateChange: @escaping OutputStateHandler
    ) {
        self.logger = logger
        self.options = options
        self.onKeyframeNeeded = onKeyframeNeeded
        self.onStateChange = onStateChange
        queue = TagQueue(limitMs: options.queueLimitMs)
        current = initial
    }

    // MARK: caller side

    var stateChange: OutputStateChange { condition.withLock { current } }
    var state: OutputState { condition.withLock { current.state } }
    var message: String? { condition.withLock { current.message } }

    var stats: OutputStats {
        condition.withLock {
            var stats = counters
            stats.droppedVideoTags = queue.droppedVideo
            stats.droppedAudioTags = queue.droppedAudio
            stats.droppedDataTags = queue.droppedData
            stats.queuedTags = queue.count
            stats.queueMs = queue.spanMs
            return stats
        }
    }

    /// Records the headers and reports whether the caller should launch the worker
    /// (false when already started, stopped, or in the final `error` state).
    func begin(headers: [FLVTag]) -> Bool {
        let (launch, initError): (Bool, OutputStateChange?) = condition.withLock {
            if current.state == .error { return (false, current) }
            guard !started, stopDeadline == nil else { return (false, nil) }
            started = true
            self.headers = headers
            return (true, nil)
        }
        if let initError { onStateChange(initError) }  // report the init-time error now that someone listens
        return launch
    }

    /// Queues a tag (never blocks on I/O; the queue drops by its policy when full).
    func enqueue(_ tag: FLVTag) {
        condition.withLock {
            guard stopDeadline == nil, current.state != .error else { return }
            queue.push(tag)
            condition.signal()
        }
    }

    /// Asks the worker to flush and close, then waits (bounded) for it to finish.
    func requestStopAndWait() {
        let wasRunning: Bool = notifyLock.withLock {
            let (running, announce): (Bool, OutputState?) = condition.withLock {
                let running = started && !finished
                guard stopDeadline == nil else { return (running, nil) }
                stopDeadline = Date().addingTimeInterval(Self.flushSeconds)
                condition.broadcast()
                return (running, running ? .disconnecting : .disconnected)
            }
            if let announce { transition(to: announce, message: nil) }
            return running
        }
        guard wasRunning else { return }
        if waitUntilFinished(seconds: Self.flushSeconds + 0.5) { return }
        // The worker is stuck in a blocking write: unblock it so it can close and exit.
        condition.withLock {
            if activeSocket >= 0 { _ = shutdown(activeSocket, Int32(SHUT_RDWR)) }
        }
        if !waitUntilFinished(seconds: 1.0) {
            logger.warning("output still busy after stop (blocking connect); it will close when that returns")
        }
    }

    private func waitUntilFinished(seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        return condition.withLock {
            while !finished {
                if !condition.wait(until: deadline) { return finished }
            }
            return true
        }
    }

    // MARK: worker side

    var isStopRequested: Bool { condition.withLock { stopDeadline != nil } }
    var headerTags: [FLVTag] { condition.withLock { headers } }

    /// The stream's headers changed (a new canvas size): a later (re)connection starts with these.
    func replaceHeaders(_ headers: [FLVTag]) { condition.withLock { self.headers = headers } }

    /// The next tag to write; blocks while the queue is empty. Nil once stop was requested and the
    /// queue is drained or the flush time is up.
    func nextTag() -> FLVTag? {
        condition.withLock {
            while true {
                if let deadline = stopDeadline, queue.isEmpty || Date() >= deadline { return nil }
                if let tag = queue.popFirst() { return tag }
                condition.wait()
            }
        }
    }

    /// Sleeps up to `seconds`; false when woken by a stop request.
    func sleep(seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        return condition.withLock {
            while stopDeadline == nil {
                if !condition.wait(until: deadline) { return stopDeadline == nil }
            }
            return false
        }
    }

    /// Counts a tag written to the server or file (per tag: no allocation).
    func recordSent(_ tag: FLVTag) {
        condition.withLock {
            counters.sentTags += 1
            counters.sentBytes += tag.serializedSize
            guard !tag.isSequenceHeader else { return }
            if tag.kind == .video {
                counters.sentVideoFrames += 1
            } else if tag.kind == .audio {
                counters.sentAudioFrames += 1
            }
        }
    }

    /// Counts what a `StartGate` skipped while a (re)started stream waited for its keyframe.
    func recordSkipped(video: Int, audio: Int) {
        guard video > 0 || audio > 0 else { return }
        condition.withLock {
            counters.skippedVideoTags += video
            counters.skippedAudioTags += audio
        }
    }

    func recordReconnect() { condition.withLock { counters.reconnects += 1 } }

    func setActiveSocket(_ socket: Int32) { condition.withLock { activeSocket = socket } }

    /// Marks the worker done and wakes a waiting `stop`.
    func finish(state: OutputState, attempt: Int? = nil, message: String?) {
        transition(to: state, attempt: attempt, message: message)
        condition.withLock {
            finished = true
            activeSocket = -1
            condition.broadcast()
        }
    }

    /// Sets the state and calls the handler (outside the lock) when state, attempt or message changed.
    /// `attempt` nil keeps the current one. `error` is final: later transitions are ignored, and so are
    /// connection states once stopping.
    func transition(to newState: OutputState, attempt: Int? = nil, message: String?) {
        notifyLock.lock()
        defer { notifyLock.unlock() }
        let change: OutputStateChange? = condition.withLock {
            guard current.state != .error else { return nil }
            // Once stopping, a worker finishing a connect must not report `connected` again.
            if stopDeadline != nil, [.connecting, .connected, .reconnecting].contains(newState) { return nil }
            // `disconnected` after stop is final too (a late `disconnecting` must not follow it).
            if current.state == .disconnected, stopDeadline != nil { return nil }
            let next = OutputStateChange(state: newState, attempt: attempt ?? current.attempt, message: message)
            guard next != current else { return nil }
            current = next
            return next
        }
        guard let change else { return }
        let suffix = change.message.map { ": \($0)" } ?? ""
        logger.info("output state \(newState.rawValue) (attempt \(change.attempt))\(suffix)")
        onStateChange(change)
    }
}

extension OutputCore {
    /// Starts an output's worker thread, named `name` for the system too (`top -H`, /proc/…/task/…/comm: 15 bytes
    /// at most; the benchmark reads an output's own CPU by it). A name given before the thread starts does not
    /// reach the system on Linux: it is set from the thread itself.
    static func startWorker(named name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread {
            Thread.current.name = String(name.utf8.prefix(15)) ?? "output"
            body()
        }
        thread.name = name
        thread.start()
    }
}
