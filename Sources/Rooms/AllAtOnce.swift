import Foundation

/// Runs `body` for every item, each on a thread of its own, and returns when all are done. For stops that may each
/// wait seconds on a stuck connection (outputs, rooms): together they take the longest one's time, not the sum.
func allAtOnce<Item: Sendable>(_ items: [Item], _ body: @escaping @Sendable (Item) -> Void) {
    let done = DispatchGroup()
    for item in items {
        done.enter()
        Thread.detachNewThread {
            body(item)
            done.leave()
        }
    }
    done.wait()
}
