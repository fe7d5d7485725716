import Foundation

/// A flag shared between threads (the clock thread and a room queue; output threads and the encoder).
final class ManagedFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func setIfClear() -> Bool { lock.withLock { if value { return false }; value = true; return true } }
    func clear() { lock.withLock { value = false } }
    /// Clears the flag and says whether it was set.
    func take() -> Bool { lock.withLock { defer { value = false }; return value } }
}
