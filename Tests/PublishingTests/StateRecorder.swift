import Foundation
import Publishing

/// Collects an output's state changes (from its thread) for assertions.
final class StateRecorder: @unchecked Sendable {  // guarded by lock
    private let lock = NSLock()
    private var changes: [(OutputState, String?)] = []

    var handler: OutputStateHandler {
        { [self] state, message in lock.withLock { changes.append((state, message)) } }
    }

    var states: [OutputState] { lock.withLock { changes.map(\.0) } }
    var messages: [String] { lock.withLock { changes.compactMap(\.1) } }

    /// Polls `condition` every 20 ms until it holds or `timeout` seconds pass.
    static func wait(timeout: Double, until condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() {
            if Date() >= deadline { return false }
            usleep(20_000)
        }
        return true
    }
}
