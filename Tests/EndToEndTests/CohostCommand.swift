import Foundation

/// The `cohost` binary run as a script runs it: arguments, an environment without the test's own COHOST_*
/// variables, standard input, and its standard output and error kept apart.
final class CohostCommand: @unchecked Sendable {  // output guarded by lock
    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String

        /// The rows of a table: each line's cells (columns are two or more spaces apart).
        var rows: [[String]] {
            stdout.split(separator: "\n").map { line in
                line.split(separator: "  ", omittingEmptySubsequences: true).map {
                    $0.trimmingCharacters(in: .whitespaces)
                }
            }
        }

        var json: Any? { try? JSONSerialization.jsonObject(with: Data(stdout.utf8)) }
    }

    private let process = Process()
    private let lock = NSLock()
    private var out = Data()
    private var err = Data()
    private var closedPipes = 0
    private let outPipe = Pipe()
    private let errPipe = Pipe()

    init(_ arguments: [String], environment: [String: String]) {
        process.executableURL = URL(fileURLWithPath: CohostHarness.binary)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("COHOST_") }
        env.merge(environment) { _, new in new }
        process.environment = env
        process.standardOutput = outPipe
        process.standardError = errPipe
    }

    deinit {
        if process.isRunning { process.terminate() }
    }

    /// Starts it; `input` is written to its standard input, which is then closed.
    func start(input: Data? = nil) throws {
        // A blocking reader per pipe: it sees the end of file for certain once the process has exited, where a
        // readabilityHandler may never be called for it.
        for (pipe, isOut) in [(outPipe, true), (errPipe, false)] {
            let handle = pipe.fileHandleForReading
            Thread.detachNewThread { [weak self] in
                while true {
                    let data = handle.availableData
                    self?.received(data, isOut: isOut)
                    if data.isEmpty { return }
                }
            }
        }
        let inPipe = Pipe()
        process.standardInput = inPipe
        try process.run()
        if let input { inPipe.fileHandleForWriting.write(input) }
        try inPipe.fileHandleForWriting.close()
    }

    private func received(_ data: Data, isOut: Bool) {
        lock.withLock {
            if data.isEmpty {
                closedPipes += 1
            } else if isOut {
                out.append(data)
            } else {
                err.append(data)
            }
        }
    }

    var stdout: String { lock.withLock { String(decoding: out, as: UTF8.self) } }
    var stderr: String { lock.withLock { String(decoding: err, as: UTF8.self) } }
    var isRunning: Bool { process.isRunning }

    /// Waits for the exit (killing it after `timeout` seconds) and for the pipes to drain.
    func wait(timeout: Double = 20) throws -> Result {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { usleep(5_000) }
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
            throw HarnessError("cohost \(process.arguments ?? []) ran over \(timeout) s; stderr: \(stderr)")
        }
        process.waitUntilExit()
        // The last bytes may still be in a pipe when the process has exited, and a loaded machine may take seconds
        // to hand them over: wait for both ends of file, which an exited process always gives.
        let drained = Date().addingTimeInterval(15)
        while lock.withLock({ closedPipes < 2 }), Date() < drained { usleep(5_000) }
        return Result(status: process.terminationStatus, stdout: stdout, stderr: stderr)
    }

    /// Runs `cohost arguments…` to its end.
    static func run(_ arguments: [String], environment: [String: String] = [:], input: Data? = nil) throws -> Result {
        let command = CohostCommand(arguments, environment: environment)
        try command.start(input: input)
        return try command.wait()
    }
}
