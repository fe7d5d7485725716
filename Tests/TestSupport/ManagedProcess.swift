import Foundation

/// A child process for tests that is always cleaned up: `terminate()` sends SIGTERM, then SIGKILL
/// after 2 s, and `deinit` terminates whatever is still running.
///
/// `@unchecked Sendable`: mutable state (captured output) is guarded by `lock`; Foundation's Process
/// is only started and signalled through this type.
public final class ManagedProcess: @unchecked Sendable {
    /// Captured output beyond this many bytes keeps only the tail (the interesting part of a log).
    public static let outputLimit = 256 * 1024

    /// The name or path given to `init`; resolved against PATH by `start()`.
    public let executable: String
    public let arguments: [String]
    private let process = Process()
    private let lock = NSLock()
    private var captured: [UInt8] = []
    private let pipe: Pipe?

    /// - Parameters:
    ///   - executable: a name searched in PATH (when `start()` runs), or a path.
    ///   - environment: variables added to (or replacing) the current environment.
    ///   - captureOutput: collect stdout and stderr together into `output`; otherwise both go to /dev/null.
    public init(
        executable: String, arguments: [String], environment: [String: String] = [:],
        captureOutput: Bool = true
    ) {
        self.executable = executable
        self.arguments = arguments
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        process.standardInput = FileHandle.nullDevice
        if captureOutput {
            let pipe = Pipe()
            self.pipe = pipe
            process.standardOutput = pipe
            process.standardError = pipe
        } else {
            pipe = nil
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
        }
    }

    deinit {
        terminate()
    }

    /// Launches the process; throws when the executable is not found or cannot run.
    public func start() throws {
        process.executableURL = URL(fileURLWithPath: try findExecutable(executable))
        if let pipe {
            pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
                let data = handle.availableData
                guard !data.isEmpty else {
                    handle.readabilityHandler = nil
                    return
                }
                self?.append(data)
            }
        }
        try process.run()
    }

    public var isRunning: Bool { process.isRunning }
    public var processIdentifier: Int32 { process.processIdentifier }

    /// The exit status, or nil when the process is still running after `timeout` seconds.
    /// A process killed by a signal reports the signal number.
    @discardableResult
    public func waitForExit(timeout: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning {
            if Date() >= deadline { return nil }
            usleep(10_000)
        }
        return process.terminationStatus
    }

    /// SIGTERM, then SIGKILL if the process is still alive 2 s later. Returns once it has exited.
    public func terminate() {
        guard process.processIdentifier > 0, process.isRunning else { return }
        process.terminate()
        if waitForExit(timeout: 2) == nil {
            kill(process.processIdentifier, SIGKILL)
            waitForExit(timeout: 2)
        }
    }

    /// Captured stdout and stderr (the last `outputLimit` bytes).
    public var output: String {
        lock.withLock { String(decoding: captured, as: UTF8.self) }
    }

    private func append(_ data: Data) {
        lock.withLock {
            captured.append(contentsOf: data)
            if captured.count > Self.outputLimit { captured.removeFirst(captured.count - Self.outputLimit) }
        }
    }
}

/// The full path of `name`: itself when it contains a slash, else the first executable match in PATH.
public func findExecutable(_ name: String) throws -> String {
    if name.contains("/") {
        guard FileManager.default.isExecutableFile(atPath: name) else {
            throw TestSupportError.executableNotFound(name)
        }
        return name
    }
    let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
    // The standard directories come last: test runners do not always pass the full PATH (nginx is in sbin).
    let directories =
        path.split(separator: ":").map(String.init) + ["/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"]
    for directory in directories where !directory.isEmpty {
        let candidate = "\(directory)/\(name)"
        if access(candidate, X_OK) == 0 { return candidate }
    }
    throw TestSupportError.executableNotFound("\(name) (PATH=\(path))")
}

/// Runs a one-shot tool (ffprobe, ffmpeg) to completion; kills it when it outlives `timeout` seconds.
/// stdout comes back as bytes (raw video/audio), stderr as text (the last 64 KiB).
public func run(
    _ executable: String, _ arguments: [String], timeout: Double
) throws
    -> (status: Int32, stdout: [UInt8], stderr: String)
{
    let process = Process()
    process.executableURL = URL(fileURLWithPath: try findExecutable(executable))
    process.arguments = arguments
    process.standardInput = FileHandle.nullDevice
    let outPipe = Pipe(), errPipe = Pipe()
    process.standardOutput = outPipe
    process.standardError = errPipe

    // Read both pipes concurrently so a chatty child never blocks on a full pipe.
    let collected = CollectedOutput()
    let group = DispatchGroup()
    for (pipe, isStdout) in [(outPipe, true), (errPipe, false)] {
        group.enter()
        DispatchQueue.global().async {
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            collected.set(data, stdout: isStdout)
            group.leave()
        }
    }
    try process.run()
    let deadline = Date().addingTimeInterval(timeout)
    var timedOut = false
    while process.isRunning {
        if Date() >= deadline {
            timedOut = true
            process.terminate()
            usleep(200_000)
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            break
        }
        usleep(5_000)
    }
    process.waitUntilExit()
    _ = group.wait(timeout: .now() + 5)
    let (stdout, stderr) = collected.values
    if timedOut {
        throw TestSupportError.timedOut(
            "\(executable) \(arguments.joined(separator: " ")) after \(timeout) s; stderr: \(stderr.suffix(2000))")
    }
    return (process.terminationStatus, stdout, stderr)
}

/// Output gathered by `run` from two reader threads.
private final class CollectedOutput: @unchecked Sendable {  // guarded by lock
    private let lock = NSLock()
    private var stdout: [UInt8] = []
    private var stderr: [UInt8] = []

    func set(_ data: Data, stdout isStdout: Bool) {
        lock.withLock {
            if isStdout { stdout = [UInt8](data) } else { stderr = [UInt8](data.suffix(64 * 1024)) }
        }
    }

    var values: ([UInt8], String) {
        lock.withLock { (stdout, String(decoding: stderr, as: UTF8.self)) }
    }
}
