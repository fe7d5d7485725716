import Foundation
@testable import Publishing

/// A publisher environment that plays a script of connection outcomes on a virtual clock, so the
/// reconnect state machine runs through its waits instantly and every wait it asks for is recorded.
/// When the script runs out, the next wait parks (a real, stop-interruptible sleep) until the test stops the output.
final class ScriptedEnvironment: PublisherEnvironment, @unchecked Sendable {  // guarded by lock
    enum Step {
        /// The connect fails like a refused TCP connection (retryable).
        case fail(String)
        /// The server refuses the application (final).
        case refuse(String)
        /// The connect succeeds; the connection breaks on write number `writes + 1` (nil: never).
        /// Each write advances the clock by `secondsPerWrite`.
        case accept(writes: Int?, secondsPerWrite: Double)
    }

    private let lock = NSLock()
    private var steps: [Step]
    private var clock = 0.0
    private var recordedWaits: [Double] = []
    private var connections: [[FLVTag]] = []
    private var connectCount = 0

    init(_ steps: [Step]) { self.steps = steps }

    /// Seconds asked for by each backoff wait, in order.
    var waits: [Double] { lock.withLock { recordedWaits } }
    /// The tags each accepted connection received, in order.
    var written: [[FLVTag]] { lock.withLock { connections } }
    var connects: Int { lock.withLock { connectCount } }

    func connect(url: String) throws(OutputIOError) -> any PublishingConnection {
        let step: Step? = lock.withLock {
            connectCount += 1
            return steps.isEmpty ? nil : steps.removeFirst()
        }
        switch step {
        case .fail(let message)?: throw OutputIOError(description: message)
        case .refuse(let message)?: throw OutputIOError(description: message, isFinal: true)
        case .accept(let writes, let seconds)?:
            let index = lock.withLock {
                connections.append([])
                return connections.count - 1
            }
            return ScriptedConnection(environment: self, index: index, writesLeft: writes, secondsPerWrite: seconds)
        case nil: throw OutputIOError(description: "script exhausted")
        }
    }

    func now() -> Double { lock.withLock { clock } }

    func wait(seconds: Double, core: OutputCore) -> Bool {
        let exhausted: Bool = lock.withLock {
            recordedWaits.append(seconds)
            clock += seconds
            return steps.isEmpty
        }
        if exhausted { return core.sleep(seconds: 60) }
        return !core.isStopRequested
    }

    fileprivate func record(_ tag: FLVTag, connection: Int, seconds: Double) {
        lock.withLock {
            connections[connection].append(tag)
            clock += seconds
        }
    }
}

/// One scripted connection: records what is written until its scripted break.
final class ScriptedConnection: PublishingConnection {
    private let environment: ScriptedEnvironment
    private let index: Int
    private var writesLeft: Int?
    private let secondsPerWrite: Double

    init(environment: ScriptedEnvironment, index: Int, writesLeft: Int?, secondsPerWrite: Double) {
        self.environment = environment
        self.index = index
        self.writesLeft = writesLeft
        self.secondsPerWrite = secondsPerWrite
    }

    var socket: Int32 { -1 }

    func write(_ tag: FLVTag) throws(OutputIOError) {
        if let left = writesLeft {
            guard left > 0 else { throw OutputIOError(description: "connection reset by peer") }
            writesLeft = left - 1
        }
        environment.record(tag, connection: index, seconds: secondsPerWrite)
    }

    func serviceIncoming() throws(OutputIOError) {}
}
