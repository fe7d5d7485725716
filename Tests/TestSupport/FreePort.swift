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
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw TestSupportError.system("bind", errno) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { throw TestSupportError.system("getsockname", errno) }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// True when something accepts TCP connections on 127.0.0.1:`port`.
    public static func tcpAccepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
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
