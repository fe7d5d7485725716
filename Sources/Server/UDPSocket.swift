import Foundation
#if canImport(Glibc)
import Glibc
#endif
import CUDP
import Rooms

/// A failed socket call, with the system's message ("bind 127.0.0.1:7882: Address already in use").
public struct UDPSocketError: Error, CustomStringConvertible, Equatable {
    public let call: String
    /// `errno`, or for a failed name lookup `getaddrinfo`'s own (negative) code.
    public let code: Int32
    public let message: String

    init(call: String, code: Int32) {
        self.call = call
        self.code = code
        message = String(cString: strerror(code))
    }

    init(call: String, lookupStatus status: Int32) {
        self.call = call
        code = status
        message = String(cString: gai_strerror(status))
    }

    public var description: String { "\(call): \(message)" }
}

/// One bound UDP socket (IPv4, or IPv6 and dual-stack for "::"), owning its descriptor.
///
/// Why not SwiftNIO's `DatagramChannel`, which the rest of the server uses: NIO hands every datagram up its
/// pipeline as an `AddressedEnvelope` with a boxed `SocketAddress` and an array per read batch, ≈2.5 heap
/// allocations per datagram that no option turns off, on the path every RTP packet takes. This socket
/// receives a batch with one `recvmmsg` into a preallocated `DatagramBatch` and allocates nothing.
public final class UDPSocket: @unchecked Sendable {
    let descriptor: Int32
    let family: Int32
    /// The port the socket is bound to (the one the system chose when asked for port 0).
    public let localPort: Int

    /// Binds `host:port` (a numeric address or a name `getaddrinfo` resolves; the first answer is taken).
    /// A port already bound by another socket is an error: no `SO_REUSEADDR`, which for UDP on Linux would
    /// let a second server share the port and take some of the first one's packets.
    public init(host: String, port: Int, receiveBufferBytes: Int = 4 << 20) throws(UDPSocketError) {
        let info = try BindAddress(host: host, port: port, type: Int32(SOCK_DGRAM.rawValue))
        family = info.family
        let fd = socket(family, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw UDPSocketError(call: "socket", code: errno) }
        var size = Int32(receiveBufferBytes)
        // Bursts of a few video frames from several senders must not overflow the kernel's default ≈200 KB.
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        if family == AF_INET6 {
            // "::" takes IPv4 peers too, whatever net.ipv6.bindv6only says.
            var dualStack: Int32 = 0
            _ = setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &dualStack, socklen_t(MemoryLayout<Int32>.size))
        }
        guard bind(fd, info.address, info.length) == 0 else {
            let code = errno
            close(fd)
            throw UDPSocketError(call: "bind \(host):\(port)", code: code)
        }
        var bound = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &bound) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        descriptor = fd
        localPort = Self.peer(bound)?.port ?? port
    }

    deinit { close(descriptor) }

    /// Receives what is waiting (up to the batch's capacity) without blocking; 0 when nothing is.
    public func receive(into batch: DatagramBatch) throws(UDPSocketError) -> Int {
        let count = cudp_receive_batch(
            descriptor, batch.buffer, batch.slotSize, UInt32(batch.capacity),
            batch.lengths, batch.peers, batch.truncated)
        guard count >= 0 else { throw UDPSocketError(call: "recvmmsg", code: -count) }
        batch.count = Int(count)
        return Int(count)
    }

    /// Sends one datagram without blocking; false when the address cannot be reached from this socket
    /// (a name, or IPv6 on an IPv4 socket) or the kernel refused it (e.g. a full send buffer).
    @discardableResult
    public func send(_ bytes: [UInt8], to peer: PeerAddress) -> Bool {
        var address = sockaddr_storage()
        guard let length = Self.socketAddress(peer, family: family, into: &address) else { return false }
        let sent = bytes.withUnsafeBytes { payload in
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(descriptor, payload.baseAddress, payload.count, Int32(MSG_DONTWAIT), $0, length)
                }
            }
        }
        return sent == bytes.count
    }

    /// The sender of a datagram; an IPv4 peer of a dual-stack socket (`::ffff:a.b.c.d`) is given as IPv4, so
    /// it compares equal to the same peer seen on an IPv4 socket.
    static func peer(_ storage: sockaddr_storage) -> PeerAddress? {
        let family = Int32(storage.ss_family)
        return withUnsafeBytes(of: storage) { raw -> PeerAddress? in
            switch family {
            case AF_INET:
                let v4 = raw.load(as: sockaddr_in.self)
                return PeerAddress(
                    ipv4: UInt32(bigEndian: v4.sin_addr.s_addr), port: Int(UInt16(bigEndian: v4.sin_port)))
            case AF_INET6:
                let v6 = raw.load(as: sockaddr_in6.self)
                let port = Int(UInt16(bigEndian: v6.sin6_port))
                let peer = PeerAddress(ipv6: v6.sin6_addr, scope: v6.sin6_scope_id, port: port)
                let mapped = withUnsafeBytes(of: v6.sin6_addr) { bytes in
                    bytes.prefix(10).allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF
                        ? UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: 12, as: UInt32.self)) : nil
                }
                return mapped.map { PeerAddress(ipv4: $0, port: port) } ?? peer
            default:
                return nil
            }
        }
    }

    /// `peer` as a socket address of `family` (IPv4 peers are mapped for an IPv6 socket); nil when impossible.
    static func socketAddress(_ peer: PeerAddress, family: Int32, into storage: inout sockaddr_storage) -> socklen_t? {
        let port = UInt16(truncatingIfNeeded: peer.port).bigEndian
        var v6address: in6_addr
        var scope: UInt32 = 0
        if let v4 = peer.ipv4 {
            if family == AF_INET {
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_port = port
                address.sin_addr.s_addr = v4.bigEndian
                withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: address, as: sockaddr_in.self) }
                return socklen_t(MemoryLayout<sockaddr_in>.size)
            }
            v6address = in6_addr()
            withUnsafeMutableBytes(of: &v6address) { bytes in
                bytes[10] = 0xFF
                bytes[11] = 0xFF
                bytes.storeBytes(of: v4.bigEndian, toByteOffset: 12, as: UInt32.self)
            }
        } else if let v6 = peer.ipv6, family == AF_INET6 {
            v6address = v6
            scope = peer.ipv6Scope
        } else {
            return nil
        }
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_port = port
        address.sin6_addr = v6address
        address.sin6_scope_id = scope  // a link-local peer is only reachable through its own interface
        withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: address, as: sockaddr_in6.self) }
        return socklen_t(MemoryLayout<sockaddr_in6>.size)
    }
}
