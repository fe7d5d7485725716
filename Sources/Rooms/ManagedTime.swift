import Foundation

/// A time in milliseconds shared between threads, behind a lock held only to read or write it.
final class ManagedTime: @unchecked Sendable {
    private let lock = NSLock()
    private var ms: Int64
    init(_ ms: Int64) { self.ms = ms }
    var value: Int64 { lock.withLock { ms } }
    func set(_ newValue: Int64) { lock.withLock { ms = newValue } }
}
