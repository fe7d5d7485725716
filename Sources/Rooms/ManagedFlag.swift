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

/// A time in milliseconds shared between threads, behind a lock held only to read or write it.
final class ManagedTime: @unchecked Sendable {
    private let lock = NSLock()
    private var ms: Int64
    init(_ ms: Int64) { self.ms = ms }
    var value: Int64 { lock.withLock { ms } }
    func set(_ newValue: Int64) { lock.withLock { ms = newValue } }
}
