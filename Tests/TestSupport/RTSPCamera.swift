import Foundation

/// A test IP camera: GStreamer's RTSP server (Tests/Tools/rtsp_camera.py, run by the system Python with Debian's
/// gst-rtsp-server bindings) serving H.264 of one colour and a PCMU tone at `rtsp://127.0.0.1:<port>/cam`, over
/// TCP and UDP. `stop()` and `start()` take the camera away and bring it back on the same port.
public final class RTSPCamera: @unchecked Sendable {
    public let port: Int
    public let colour: String
    public let toneHz: Int
    public let credentials: (user: String, password: String)?
    private var process: ManagedProcess?

    /// `colour`: GStreamer's 0xAARRGGBB.
    public init(colour: String, toneHz: Int, credentials: (user: String, password: String)? = nil) throws {
        port = try FreePort.tcp()
        self.colour = colour
        self.toneHz = toneHz
        self.credentials = credentials
        try start()
    }

    deinit { stop() }

    /// The camera's URL, with its credentials when it has some.
    public var url: String {
        let userInfo = credentials.map { "\($0.user):\($0.password)@" } ?? ""
        return "rtsp://\(userInfo)127.0.0.1:\(port)/cam"
    }

    public static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Tools/rtsp_camera.py").path
    }

    /// Starts serving; returns once the server listens (10 s at most).
    public func start() throws {
        var arguments = [Self.script, "\(port)", "--colour", colour, "--tone", "\(toneHz)"]
        if let credentials { arguments += ["--user", credentials.user, "--password", credentials.password] }
        let process = ManagedProcess(executable: "/usr/bin/python3", arguments: arguments)
        try process.start()
        let deadline = Date().addingTimeInterval(10)
        while !process.output.contains("ready") {
            guard process.isRunning, Date() < deadline else {
                process.terminate()
                throw TestSupportError.failed("the RTSP camera did not start: \(process.output)")
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        self.process = process
    }

    public func stop() {
        process?.terminate()
        process = nil
    }
}
