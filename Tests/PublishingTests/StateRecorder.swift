import Foundation
import Publishing

/// Collects an output's state changes (from its thread) for assertions.
final class StateRecorder: @unchecked Sendable {  // guarded by lock
    private let lock = NSLock()
    private var recorded: [OutputStateChange] = []

    var handler: OutputStateHandler {
        { [self] change in lock.withLock { recorded.append(change) } }
    }

    var changes: [OutputStateChange] { lock.withLock { recorded } }
    var states: [OutputState] { changes.map(\.state) }
    var messages: [String] { changes.compactMap(\.message) }

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

/// Counts keyframe requests from an output's thread.
final class KeyframeRequestCounter: @unchecked Sendable {  // guarded by lock
    private let lock = NSLock()
    private var value = 0

    var handler: KeyframeRequestHandler { { [self] in lock.withLock { value += 1 } } }
    var count: Int { lock.withLock { value } }
}
