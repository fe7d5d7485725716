import Foundation

/// Loopback socket addresses (127.0.0.1 unless another 127.x address is named) and the calls that take one,
/// written once for every test helper.
public enum Loopback {
    public static func address(port: Int, host: String = "127.0.0.1") -> sockaddr_in {
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = in_port_t(UInt16(clamping: port).bigEndian)
        a.sin_addr.s_addr = inet_addr(host)
        return a
    }

    /// `body` with `host`:`port` as a `sockaddr` pointer and its length.
    public static func withSockaddr<R>(
        port: Int, host: String = "127.0.0.1", _ body: (UnsafePointer<sockaddr>, socklen_t) -> R
    ) -> R {
        var a = address(port: port, host: host)
        return withUnsafePointer(to: &a) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
    }

    /// `bind(2)` to `host`:`port`; true on success.
    public static func bind(_ fd: Int32, port: Int, host: String = "127.0.0.1") -> Bool {
        withSockaddr(port: port, host: host) { Glibc.bind(fd, $0, $1) } == 0
    }

    /// `connect(2)` to 127.0.0.1:`port`; true on success.
    public static func connect(_ fd: Int32, port: Int) -> Bool {
        withSockaddr(port: port) { Glibc.connect(fd, $0, $1) } == 0
    }

    /// The local port of a bound socket, or nil.
    public static func localPort(_ fd: Int32) -> Int? {
        var a = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &a) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return named == 0 ? Int(UInt16(bigEndian: a.sin_port)) : nil
    }
}
