import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The address a socket binds `host:port` to: a numeric address or a name, the first answer `getaddrinfo` gives,
/// owned until this goes (freed with it; no pointer outlives it).
final class BindAddress {
    private let list: UnsafeMutablePointer<addrinfo>
    var family: Int32 { list.pointee.ai_family }
    var address: UnsafeMutablePointer<sockaddr> { list.pointee.ai_addr }
    var length: socklen_t { list.pointee.ai_addrlen }

    /// `type`: SOCK_DGRAM or SOCK_STREAM. The error carries the resolver's message.
    init(host: String, port: Int, type: Int32) throws(UDPSocketError) {
        var hints = addrinfo()
        hints.ai_socktype = type
        hints.ai_flags = AI_PASSIVE
        var found: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &found)
        guard status == 0, let found else {
            throw status == EAI_SYSTEM
                ? UDPSocketError(call: "resolve \(host)", code: errno)
                : UDPSocketError(call: "resolve \(host)", lookupStatus: status)
        }
        list = found
    }

    deinit { freeaddrinfo(list) }
}
