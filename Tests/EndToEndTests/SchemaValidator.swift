import Foundation
import Testing
import TestSupport

/// Everything the schema conformance tests received, checked against `protocol/` by
/// `scripts/validate-against-schemas.py`.
///
/// Each HTTP answer is recorded with the request's method and path; each event with its text. The
/// records go to a JSONL file (one object per line) that the script reads.
final class ConformanceRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var records: [[String: Any]] = []

    func recordResponse(method: String, path: String, _ response: WireResponse) {
        var record: [String: Any] = ["kind": "http", "method": method, "path": path, "status": response.status]
        if let type = response.contentType { record["contentType"] = type }
        // Binary bodies (PNG) are checked by the test itself; the script needs only their content type.
        if response.contentType?.hasPrefix("image/") != true { record["body"] = response.text }
        lock.withLock { records.append(record) }
    }

    func recordEvent(_ text: String) { lock.withLock { records.append(["kind": "event", "body": text]) } }

    var count: (responses: Int, events: Int) {
        lock.withLock {
            let events = records.filter { $0["kind"] as? String == "event" }.count
            return (records.count - events, events)
        }
    }

    /// Writes the records and runs the validator on them.
    func validate() throws -> SchemaValidator.Outcome {
        let lines = try lock.withLock {
            try records.map { String(decoding: try JSONSerialization.data(withJSONObject: $0), as: UTF8.self) }
        }
        return try SchemaValidator.run(jsonLines: lines)
    }
}

/// Runs `scripts/validate-against-schemas.py protocol/openapi.yaml protocol/events.schema.json <records>`.
enum SchemaValidator {
    struct Outcome: Sendable {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Validates `jsonLines` (one record each), returning the script's exit status and output.
    static func run(jsonLines: [String]) throws -> Outcome {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cohost-schema-records-\(UUID().uuidString).jsonl")
        try Data((jsonLines.joined(separator: "\n") + "\n").utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", root.appendingPathComponent("scripts/validate-against-schemas.py").path,
            root.appendingPathComponent("protocol/openapi.yaml").path,
            root.appendingPathComponent("protocol/events.schema.json").path, file.path,
        ]
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // The outputs are small (one line per violation); read them after the exit.
        process.waitUntilExit()
        return Outcome(
            status: process.terminationStatus,
            stdout: String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self),
            stderr: String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
    }
}

/// A schema violation found after the suite ran: the script's report.
struct SchemaViolation: Error, CustomStringConvertible {
    let description: String
}

/// The one `cohost serve` of the schema conformance suite, its recorder, and the events sockets opened on it.
final class ConformanceServer: @unchecked Sendable {
    @TaskLocal static var current: ConformanceServer?

    let harness: CohostHarness
    let recorder = ConformanceRecorder()
    private let lock = NSLock()
    private var sockets: [SocketLog] = []

    init() throws { harness = try CohostHarness() }

    var port: Int { harness.httpPort }
    var pid: Int32 { harness.process.processIdentifier }

    /// An admin token for every room (`room: "*"`).
    var root: String { harness.token(room: "*", user: "root", admin: true) }

    /// Sends a request and records its answer. `token` becomes `Authorization: Bearer …`.
    @discardableResult
    func call(
        _ method: String, _ path: String, token: String? = nil, json: String? = nil, sdp: String? = nil,
        headers: [(String, String)] = [], body: [UInt8]? = nil
    ) throws -> WireResponse {
        var all = headers
        if let token { all.append(("Authorization", "Bearer \(token)")) }
        var bytes = body ?? []
        if let json {
            bytes = Array(json.utf8)
            all.append(("Content-Type", "application/json"))
        }
        if let sdp {
            bytes = Array(sdp.utf8)
            all.append(("Content-Type", "application/sdp"))
        }
        let response = try RawHTTP.exchange(port: port, method: method, target: path, headers: all, body: bytes)
        recorder.recordResponse(method: method, path: path, response)
        return response
    }

    /// An events WebSocket whose messages are all validated when the suite ends.
    func events(room: String, token: String) async throws -> SocketLog {
        let socket = SocketLog(url: "ws://127.0.0.1:\(port)/v1/rooms/\(room)/events?token=\(token)")
        lock.withLock { sockets.append(socket) }
        try await socket.waitUntilConnected()
        return socket
    }

    /// Stops the sockets and hands every event they received to the recorder.
    func finish() {
        let all = lock.withLock { sockets }
        for socket in all {
            socket.stop()
            for text in socket.messages { recorder.recordEvent(text) }
        }
        harness.process.terminate()
    }
}

/// Runs the suite against one fresh server, then validates everything it received (once per suite).
struct ConformanceServerTrait: SuiteTrait, TestScoping {
    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        let server = try ConformanceServer()
        try await ConformanceServer.$current.withValue(server) { try await function() }
        server.finish()
        let outcome = try server.recorder.validate()
        let (responses, events) = server.recorder.count
        guard outcome.status == 0 else {
            throw SchemaViolation(
                description:
                    "validate-against-schemas.py exited \(outcome.status) on \(responses) responses and \(events) events:\n\(outcome.stderr)"
            )
        }
        // Nothing received would make the check vacuous. (A whole run validates ~450 answers and ~170 events;
        // a run filtered to one test may see no event at all.)
        guard responses > 0 else {
            throw SchemaViolation(
                description: "only \(responses) responses and \(events) events were validated: \(outcome.stdout)")
        }
    }
}

extension Trait where Self == ConformanceServerTrait {
    /// One `cohost serve` for the suite; every answer and event it gave is validated against `protocol/` at the end.
    static var conformanceServer: Self { Self() }
}

/// The server of the running schema conformance suite.
func conformanceServer() throws -> ConformanceServer {
    guard let server = ConformanceServer.current else {
        throw SchemaViolation(description: "no conformance server: use @Suite(.conformanceServer)")
    }
    return server
}
