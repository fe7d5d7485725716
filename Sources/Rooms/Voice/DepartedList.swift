import Foundation

/// User ids handed from control calls to the room queue.
final class DepartedList: @unchecked Sendable {
    private let lock = NSLock()
    private var ids: [String] = []
    func append(_ id: String) { lock.withLock { ids.append(id) } }
    var isEmpty: Bool { lock.withLock { ids.isEmpty } }
    /// The ids added since the last call (no allocation when there are none).
    func take() -> [String] {
        lock.withLock {
            guard !ids.isEmpty else { return [] }
            defer { ids.removeAll() }
            return ids
        }
    }
}
