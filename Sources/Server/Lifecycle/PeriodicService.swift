import Dispatch
import Logging
import Rooms
import ServiceLifecycle
import Clocks

/// Calls `action` every `interval` seconds on a serial queue of its own (named `label`, so a thread dump shows
/// it), from the group's start until it is shut down. Work that may block (a sweep that closes a room) stays off
/// Swift's cooperative threads.
final class PeriodicService: Service, CustomStringConvertible, @unchecked Sendable {
    let description: String
    private let interval: Double
    private let label: String
    private let logger: Logger
    private let action: @Sendable (_ nowMs: Int64) -> Void

    init(
        _ name: String, every interval: Double, queue label: String, logger: Logger,
        action: @escaping @Sendable (_ nowMs: Int64) -> Void
    ) {
        description = name
        self.interval = interval
        self.label = label
        self.logger = logger
        self.action = action
    }

    func run() async throws {
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: label))
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler { [action] in action(MonotonicClock.nowMs()) }
        timer.resume()
        try? await gracefulShutdown()
        timer.cancel()
        logger.info("service stopped", metadata: ["service": "\(description)"])
    }
}
