import Foundation

/// Free loopback ports for test servers: bind port 0 on 127.0.0.1, read the port back, close.
///
/// Another process may take the port between the close and its use; tests accept that small race.
public enum FreePort {
    public static func udp() throws -> Int { try probe(type: Int32(SOCK_DGRAM.rawValue)) }
    public static func tcp() throws -> Int { try probe(type: Int32(SOCK_STREAM.rawValue)) }

    private static func probe(type: Int32) throws -> Int {
        let fd = socket(AF_INET, type, 0)
        guard fd >= 0 else { throw TestSupportError.system("socket", errno) }
        defer { close(fd) }
        guard Loopback.bind(fd, port: 0) else { throw TestSupportError.system("bind", errno) }
        guard let port = Loopback.localPort(fd) else { throw TestSupportError.system("getsockname", errno) }
        return port
    }

    /// True when something accepts TCP connections on 127.0.0.1:`port`.
    public static func tcpAccepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return Loopback.connect(fd, port: port)
    }
}

/// Failures of the test helpers, with enough text to see what went wrong in a test log.
public enum TestSupportError: Error, CustomStringConvertible {
    case system(String, Int32)
    case executableNotFound(String)
    case timedOut(String)
    case failed(String)

    public var description: String {
        switch self {
        case .system(let call, let code): "\(call) failed: \(String(cString: strerror(code)))"
        case .executableNotFound(let name): "\(name) not found in PATH"
        case .timedOut(let what): "timed out: \(what)"
        case .failed(let what): what
        }
    }
}
