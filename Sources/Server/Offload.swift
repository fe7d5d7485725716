import Foundation

/// Runs `work` on a thread of its own and awaits it, so a call that blocks (a room's queue, an output stopping
/// with a stuck connection, a PNG to decode or encode) never holds one of Swift's cooperative threads, which every
/// other request shares. For the few control calls that may block; cheap calls stay on the request's task.
func offload<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
    }
}
