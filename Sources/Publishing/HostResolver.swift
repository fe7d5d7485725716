import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Name lookups for outbound connections (outputs, pulled sources, webhooks): every address a name has, in the
/// order `getaddrinfo` gives, so the caller checks the one it dials. Blocking: call off the event loops.
public enum HostResolver {
    /// The addresses of `host` (an address literal is its own), IPv4 only when `ipv4Only`; throws with the
    /// resolver's message.
    public static func addresses(of host: String, ipv4Only: Bool = false) throws(HostLookupError) -> [IPAddress] {
        if let literal = IPAddress(host), !ipv4Only || literal.isIPv4 { return [literal] }
        var hints = addrinfo()
        hints.ai_family = ipv4Only ? AF_INET : AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &result)
        defer { if let result { freeaddrinfo(result) } }
        guard status == 0 else {
            throw HostLookupError(message: "cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        var found: [IPAddress] = []
        var next = result
        while let entry = next {
            if let address = entry.pointee.ai_addr.flatMap(IPAddress.init(sockaddr:)), !found.contains(address) {
                found.append(address)
            }
            next = entry.pointee.ai_next
        }
        guard !found.isEmpty else { throw HostLookupError(message: "cannot resolve \(host): no address") }
        return found
    }
}

public struct HostLookupError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}

extension IPAddress {
    /// The address of an AF_INET or AF_INET6 socket address.
    init?(sockaddr address: UnsafeMutablePointer<sockaddr>) {
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            self.init(
                raw: address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                    withUnsafeBytes(of: $0.pointee.sin_addr) { Array($0) }
                })
        case AF_INET6:
            self.init(
                raw: address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    withUnsafeBytes(of: $0.pointee.sin6_addr) { Array($0) }
                })
        default:
            return nil
        }
    }
}
