import Foundation

/// A throwaway PostgreSQL cluster on a free loopback port: `initdb` into a temporary directory, `pg_ctl start`,
/// trust authentication for the user `cohost`. Run as the `postgres` user when the tests run as root (PostgreSQL
/// refuses root). `stop()` (or deinit) stops it immediately and removes the directory.
public final class PostgresServer: @unchecked Sendable {
    public let port: Int
    public let directory: String
    private let bin: String
    private var running = false

    /// `postgres://cohost@127.0.0.1:<port>/postgres`.
    public var url: String { "postgres://cohost@127.0.0.1:\(port)/postgres" }

    public init() throws {
        guard
            let version = try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql").sorted().last
        else {
            throw TestSupportError.executableNotFound(
                "PostgreSQL (/usr/lib/postgresql/*/bin): apt-get install postgresql")
        }
        bin = "/usr/lib/postgresql/\(version)/bin"
        port = try FreePort.tcp()
        let template = NSTemporaryDirectory() + "cohost-pg-XXXXXX"
        var bytes = Array(template.utf8CString)
        guard let made = mkdtemp(&bytes) else { throw TestSupportError.system("mkdtemp", errno) }
        directory = String(cString: made)
        if geteuid() == 0 { _ = try run("chown", ["postgres:postgres", directory], timeout: 10) }
        let initdb = try Self.asPostgres(
            "\(bin)/initdb", ["-D", "\(directory)/data", "-U", "cohost", "--auth=trust", "-E", "UTF8", "--no-sync"],
            timeout: 60)
        guard initdb.status == 0 else {
            throw TestSupportError.failed("initdb: \(initdb.stderr.suffix(2000))")
        }
        let options =
            "-p \(port) -k \(directory) -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off"
        // Its output to a file, not to pipes: the server it leaves running would hold a pipe open for good.
        let start = try Self.startServer(
            "\(bin)/pg_ctl",
            ["-D", "\(directory)/data", "-l", "\(directory)/log", "-o", options, "-w", "-t", "30", "start"],
            output: "\(directory)/pg_ctl.out")
        guard start == 0 else {
            let out = (try? String(contentsOfFile: "\(directory)/pg_ctl.out", encoding: .utf8)) ?? ""
            let log = (try? String(contentsOfFile: "\(directory)/log", encoding: .utf8)) ?? ""
            throw TestSupportError.failed("pg_ctl start: \(out.suffix(1000)) \(log.suffix(2000))")
        }
        running = true
    }

    deinit { stop() }

    /// Stops at once (no checkpoint: the data is thrown away) and removes the directory.
    public func stop() {
        guard running else { return }
        running = false
        _ = try? Self.asPostgres(
            "\(bin)/pg_ctl", ["-D", "\(directory)/data", "-m", "immediate", "-w", "stop"], timeout: 30)
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Runs `psql -c sql` against the cluster; its output.
    public func psql(_ sql: String) throws -> String {
        let result = try Self.asPostgres("\(bin)/psql", [url, "-At", "-c", sql], timeout: 30)
        guard result.status == 0 else { throw TestSupportError.failed("psql: \(result.stderr)") }
        return String(decoding: result.stdout, as: UTF8.self)
    }

    /// Runs `tool` (as postgres when root) through the shell, stdout and stderr into `output`; its exit status.
    /// Not through Foundation's Process: the server pg_ctl leaves behind keeps Process from seeing its exit.
    private static func startServer(_ tool: String, _ arguments: [String], output: String) throws -> Int32 {
        func quoted(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        let prefix = geteuid() == 0 ? "runuser -u postgres -- " : ""
        let command =
            prefix + ([tool] + arguments).map(quoted).joined(separator: " ") + " </dev/null >" + quoted(output)
            + " 2>&1"
        let status = system(command)
        guard status != -1 else { throw TestSupportError.system("system", errno) }
        return (status >> 8) & 0xFF
    }

    private static func asPostgres(
        _ tool: String, _ arguments: [String], timeout: Double
    ) throws
        -> (status: Int32, stdout: [UInt8], stderr: String)
    {
        if geteuid() == 0 { return try run("runuser", ["-u", "postgres", "--", tool] + arguments, timeout: timeout) }
        return try run(tool, arguments, timeout: timeout)
    }
}
