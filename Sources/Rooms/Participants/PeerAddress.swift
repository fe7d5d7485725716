import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where a datagram came from; the UDP layer fills it in, Rooms only compares it.
///
/// Stored as the binary address (IPv4 or IPv6) and port, not as text: the UDP layer builds one per
/// datagram, and formatting an address string would allocate on every packet. `host` formats it on
/// demand. A host that is not a numeric address is kept as given (compared as text).
public struct PeerAddress: Hashable, Sendable, CustomStringConvertible {
    private enum Host: Hashable, Sendable {
        /// Host byte order.
        case v4(UInt32)
        /// The 16 address bytes, big-endian halves, and the scope (interface index) of a link-local
        /// address, 0 for none: fe80::1 on two interfaces is two different peers, and a reply needs it.
        case v6(UInt64, UInt64, scope: UInt32)
        case name(String)
    }

    private var address: Host
    public var port: Int
    /// The ICE-TCP connection the peer speaks over (RFC 6544), 0 for UDP: two TCP connections from one address
    /// are two peers, and neither is the same peer as a UDP socket at that address.
    public var stream: UInt32 = 0

    /// Parses a numeric IPv4 or IPv6 address (an IPv6 one may carry its scope: `fe80::1%eth0` or `%2`);
    /// anything else is kept as a name.
    public init(host: String, port: Int) {
        self.port = port
        var v4 = in_addr()
        var v6 = in6_addr()
        let parts = host.split(separator: "%", maxSplits: 1, omittingEmptySubsequences: false)
        if inet_pton(AF_INET, host, &v4) == 1 {
            address = .v4(UInt32(bigEndian: v4.s_addr))
        } else if inet_pton(AF_INET6, String(parts[0]), &v6) == 1,
            let scope = parts.count == 1 ? 0 : Self.scope(named: String(parts[1]))
        {
            address = Self.host(v6, scope: scope)
        } else {
            address = .name(host)
        }
    }

    /// An IPv4 address in host byte order (e.g. 0x7F000001 for 127.0.0.1); no allocation.
    public init(ipv4 address: UInt32, port: Int) {
        self.address = .v4(address)
        self.port = port
    }

    /// An IPv6 address as its first and last 8 bytes, each read big-endian; no allocation.
    public init(ipv6High high: UInt64, low: UInt64, scope: UInt32 = 0, port: Int) {
        address = .v6(high, low, scope: scope)
        self.port = port
    }

    /// An IPv6 address as the socket layer holds it (network byte order) with its `sin6_scope_id`; no allocation.
    public init(ipv6 raw: in6_addr, scope: UInt32 = 0, port: Int) {
        address = Self.host(raw, scope: scope)
        self.port = port
    }

    private static func host(_ raw: in6_addr, scope: UInt32) -> Host {
        var raw = raw
        return withUnsafeBytes(of: &raw) { bytes in
            .v6(
                UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
                UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self)), scope: scope)
        }
    }

    /// An interface index given as a number or an interface name; nil when neither.
    private static func scope(named text: String) -> UInt32? {
        if let number = UInt32(text) { return number }
        let index = if_nametoindex(text)
        return index == 0 ? nil : index
    }

    /// The address as text ("192.0.2.10", "::1", "fe80::1%2" with its scope's interface index), formatted on each call.
    public var host: String {
        switch address {
        case .name(let name):
            return name
        case .v4(let value):
            var raw = in_addr(s_addr: value.bigEndian)
            return Self.format(family: AF_INET, &raw)
        case .v6(_, _, let scope):
            var raw = ipv6!
            return Self.format(family: AF_INET6, &raw) + (scope == 0 ? "" : "%\(scope)")
        }
    }

    /// The IPv4 address in host byte order, when it is one.
    public var ipv4: UInt32? {
        if case .v4(let value) = address { return value }
        return nil
    }

    /// The IPv6 address as the socket layer holds it (network byte order), when it is one.
    public var ipv6: in6_addr? {
        guard case .v6(let high, let low, _) = address else { return nil }
        var raw = in6_addr()
        withUnsafeMutableBytes(of: &raw) { bytes in
            bytes.storeBytes(of: high.bigEndian, toByteOffset: 0, as: UInt64.self)
            bytes.storeBytes(of: low.bigEndian, toByteOffset: 8, as: UInt64.self)
        }
        return raw
    }

    /// The scope (interface index) of an IPv6 address, 0 for none or for IPv4.
    public var ipv6Scope: UInt32 {
        if case .v6(_, _, let scope) = address { return scope }
        return 0
    }

    /// Same host, whatever the port (plain RTCP may come from the port above the RTP one).
    public func hasSameHost(as other: PeerAddress) -> Bool { address == other.address }

    public var description: String { stream == 0 ? "\(host):\(port)" : "tcp/\(stream)/\(host):\(port)" }

    /// Whether the peer speaks over ICE-TCP.
    public var isStream: Bool { stream != 0 }

    /// `raw` is an `in_addr` or `in6_addr`.
    private static func format<T>(family: Int32, _ raw: inout T) -> String {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: Int(INET6_ADDRSTRLEN) + 1) { buffer in
            let written = withUnsafeBytes(of: &raw) { address in
                buffer.baseAddress.flatMap { inet_ntop(family, address.baseAddress, $0, socklen_t(buffer.count)) }
            }
            guard written != nil, let base = buffer.baseAddress else { return "?" }
            return String(cString: base)
        }
    }
}
