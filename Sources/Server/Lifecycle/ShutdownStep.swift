import Logging
import ServiceLifecycle

/// A service that runs nothing of its own: when the group shuts it down, it does `action` (closing the rooms,
/// draining webhooks, stopping the cluster heartbeat) and returns, so the group stops the next service only after
/// this one's work is done.
struct ShutdownStep: Service, CustomStringConvertible {
    let description: String
    let logger: Logger
    let action: @Sendable () async -> Void

    init(_ name: String, logger: Logger, action: @escaping @Sendable () async -> Void) {
        description = name
        self.logger = logger
        self.action = action
    }

    func run() async throws {
        // Cancelled (a sibling failed) or shut down: the step runs either way.
        try? await gracefulShutdown()
        await action()
        logger.info("service stopped", metadata: ["service": "\(description)"])
    }
}
