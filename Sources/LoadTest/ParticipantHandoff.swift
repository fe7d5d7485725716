import Foundation

/// How participants reach a worker thread that runs while they join (the pacer, the receiver): added from any
/// thread, taken by the worker each turn under `lock`; `stop` ends the worker and waits until it has returned.
final class ParticipantHandoff: @unchecked Sendable {
    private let lock = NSLock()
    private var pending: [LoadParticipant] = []
    private var running = true
    private let finished = DispatchSemaphore(value: 0)

    func add(_ participant: LoadParticipant) { lock.withLock { pending.append(participant) } }

    /// The worker's turn: nil once stopped, else the participants added since its last turn.
    func take() -> [LoadParticipant]? {
        lock.withLock {
            defer { pending.removeAll() }
            return running ? pending : nil
        }
    }

    /// Called by the worker as it returns.
    func workerEnded() { finished.signal() }

    /// Asks the worker to end and waits for it.
    func stop() {
        lock.withLock { running = false }
        finished.wait()
    }
}
