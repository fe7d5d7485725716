import Foundation

/// A private nginx with the RTMP module, in the foreground on a free loopback port.
///
/// Everything lives in a temporary directory (config, error log, pid, recordings) that is removed
/// when the server is deallocated. `deinit` stops the process.
/// `@unchecked Sendable`: `process` is replaced only by `restart()`, which tests call from one task; the ports
/// change only during `init`.
public final class NginxRTMP: @unchecked Sendable {
    public static let modulePath = "/usr/lib/nginx/modules/ngx_rtmp_module.so"
    /// nginx's stream module (Debian package libnginx-mod-stream): terminates TLS in front of RTMP.
    public static let streamModulePath = "/usr/lib/nginx/modules/ngx_stream_module.so"

    public private(set) var port: Int
    /// The temporary prefix directory (nginx.conf, error.log, recordings).
    public let directory: String
    /// Whether published streams are recorded to `recordingPath(stream:)`.
    public let records: Bool
    /// With `tls: true`, a TLS listener (self-signed certificate) that forwards to `port`: rtmps://.
    public private(set) var tlsPort: Int?
    private var process: ManagedProcess?

    /// Writes the config and starts nginx. `record: true` adds `record all` so every published stream
    /// is written to `<directory>/<stream>.flv` (overwritten on each publish of the same name).
    /// `tls: true` also listens for rtmps:// on `tlsPort`, through nginx's stream module with a
    /// certificate made by openssl for 127.0.0.1.
    public init(record: Bool = false, tls: Bool = false) throws {
        port = try FreePort.tcp()
        var tlsPort = tls ? try FreePort.tcp() : nil
        while tlsPort == port { tlsPort = try FreePort.tcp() }
        self.tlsPort = tlsPort
        records = record
        let template = NSTemporaryDirectory() + "cohost-nginx-XXXXXX"
        var bytes = Array(template.utf8CString)
        guard let made = mkdtemp(&bytes) else { throw TestSupportError.system("mkdtemp", errno) }
        directory = String(cString: made)
        if tls {
            let made = try run(
                "openssl",
                [
                    "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-subj", "/CN=127.0.0.1", "-keyout", directory + "/key.pem",
                    "-out", directory + "/cert.pem",
                ], timeout: 30)
            guard made.status == 0 else { throw TestSupportError.failed("openssl: \(made.stderr)") }
        }
        // The ports are picked free, then bound by nginx: something else may take one in between. nginx then
        // exits at once saying so, and the next try picks new ports.
        for attempt in 1...3 {
            try config().write(toFile: directory + "/nginx.conf", atomically: false, encoding: .utf8)
            do {
                try launch()
                return
            } catch  where attempt < 3 && errorLog.contains("Address already in use") {
                try? FileManager.default.removeItem(atPath: directory + "/error.log")
                port = try FreePort.tcp()
                if tls { repeat { tlsPort = try FreePort.tcp() } while tlsPort == port }
            }
        }
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// rtmp://127.0.0.1:port/live/stream
    public func url(stream: String) -> String { "rtmp://127.0.0.1:\(port)/live/\(stream)" }

    /// rtmps://127.0.0.1:tlsPort/live/stream (nil without `tls: true`).
    public func tlsURL(stream: String) -> String? { tlsPort.map { "rtmps://127.0.0.1:\($0)/live/\(stream)" } }

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
        // nginx writes its pid file after binding every listener: until then a connection that succeeds may be
        // reaching someone else who took the port (nginx then retries its bind for 2.5 s and gives up).
        let pidFile = directory + "/nginx.pid"
        try? FileManager.default.removeItem(atPath: pidFile)
        let process = ManagedProcess(executable: "nginx", arguments: ["-p", directory + "/", "-c", "nginx.conf"])
        try process.start()
        self.process = process
        let deadline = Date().addingTimeInterval(5)
        while !FileManager.default.fileExists(atPath: pidFile) || !FreePort.tcpAccepts(port: port)
            || !(tlsPort.map { FreePort.tcpAccepts(port: $0) } ?? true)
        {
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
        let tls =
            tlsPort.map { tlsPort in
                """
                stream {
                    server {
                        listen 127.0.0.1:\(tlsPort) ssl;
                        ssl_certificate \(directory)/cert.pem;
                        ssl_certificate_key \(directory)/key.pem;
                        proxy_pass 127.0.0.1:\(port);
                    }
                }
                """
            } ?? ""
        return """
            load_module \(Self.modulePath);
            \(tlsPort == nil ? "" : "load_module \(Self.streamModulePath);")
            daemon off;
            master_process off;
            worker_processes 1;
            error_log \(directory)/error.log info;
            pid \(directory)/nginx.pid;
            events { worker_connections 64; }
            \(tls)
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
