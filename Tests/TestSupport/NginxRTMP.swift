import Foundation

/// A private nginx with the RTMP module, in the foreground on a free loopback port.
///
/// Everything lives in a temporary directory (config, error log, pid, recordings) that is removed
/// when the server is deallocated. `deinit` stops the process.
/// `@unchecked Sendable`: `process` is replaced only by `restart()`, which tests call from one task.
public final class NginxRTMP: @unchecked Sendable {
    public static let modulePath = "/usr/lib/nginx/modules/ngx_rtmp_module.so"

    public let port: Int
    /// The temporary prefix directory (nginx.conf, error.log, recordings).
    public let directory: String
    /// Whether published streams are recorded to `recordingPath(stream:)`.
    public let records: Bool
    private var process: ManagedProcess?

    /// Writes the config and starts nginx. `record: true` adds `record all` so every published stream
    /// is written to `<directory>/<stream>.flv` (overwritten on each publish of the same name).
    public init(record: Bool = false) throws {
        port = try FreePort.tcp()
        records = record
        let template = NSTemporaryDirectory() + "cohost-nginx-XXXXXX"
        var bytes = Array(template.utf8CString)
        guard let made = mkdtemp(&bytes) else { throw TestSupportError.system("mkdtemp", errno) }
        directory = String(cString: made)
        try config().write(toFile: directory + "/nginx.conf", atomically: true, encoding: .utf8)
        try launch()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// rtmp://127.0.0.1:port/live/stream
    public func url(stream: String) -> String { "rtmp://127.0.0.1:\(port)/live/\(stream)" }

    /// Where `record all` writes `stream`.
    public func recordingPath(stream: String) -> String { "\(directory)/\(stream).flv" }

    /// nginx's error log (useful in failure messages).
    public var errorLog: String { (try? String(contentsOfFile: directory + "/error.log", encoding: .utf8)) ?? "" }

    public var isRunning: Bool { process?.isRunning ?? false }

    public func stop() {
        process?.terminate()
        process = nil
    }

    /// Stops and starts again on the same port (for reconnect tests).
    public func restart() throws {
        stop()
        try launch()
    }

    private func launch() throws {
        let process = ManagedProcess(executable: "nginx", arguments: ["-p", directory + "/", "-c", "nginx.conf"])
        try process.start()
        self.process = process
        let deadline = Date().addingTimeInterval(5)
        while !FreePort.tcpAccepts(port: port) {
            if !process.isRunning {
                throw TestSupportError.failed("nginx exited: \(process.output) \(errorLog)")
            }
            if Date() >= deadline {
                process.terminate()
                throw TestSupportError.timedOut("nginx listening on \(port): \(errorLog)")
            }
            usleep(20_000)
        }
    }

    private func config() -> String {
        let record = records ? "record all; record_path \(directory); record_unique off;" : "record off;"
        return """
        load_module \(Self.modulePath);
        daemon off;
        master_process off;
        worker_processes 1;
        error_log \(directory)/error.log info;
        pid \(directory)/nginx.pid;
        events { worker_connections 64; }
        rtmp {
            server {
                listen 127.0.0.1:\(port);
                chunk_size 4096;
                application live {
                    live on;
                    \(record)
                }
            }
        }

        """
    }
}
