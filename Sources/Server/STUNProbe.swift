import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Clocks
import ICE

/// Asks a STUN server which address this host's UDP packets come from (RFC 8489 Binding): the public address
/// Cohost announces when it sits behind a 1:1 NAT and `public_ip` is not given. A few tries within the deadline;
/// an error names what failed.
public enum STUNProbe {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The mapped IPv4 address `server` reports, as text.
    public static func publicIPv4(server: ICEServerURL, timeoutMs: Int = 3_000) throws(Failure) -> String {
        var hints = addrinfo()
        hints.ai_family = AF_INET
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(server.host, String(server.port), &hints, &found) == 0, let info = found else {
            throw Failure(description: "cannot resolve \(server.host) to an IPv4 address")
        }
        defer { freeaddrinfo(found) }
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let transaction = (0..<12).map { _ in UInt8.random(in: 0...255) }
        let request = STUNMessage(
            method: STUNMessage.bindingMethod, messageClass: .request, transactionID: transaction
        ).serialized(fingerprint: true)
        let tries = 3
        for _ in 0..<tries {
            let sent = request.withUnsafeBytes {
                sendto(fd, $0.baseAddress, $0.count, 0, info.pointee.ai_addr, info.pointee.ai_addrlen)
            }
            guard sent == request.count else {
                throw Failure(description: "send to \(server): \(String(cString: strerror(errno)))")
            }
            let deadline = MonotonicClock.nowMs() + Int64(timeoutMs / tries)
            while MonotonicClock.nowMs() < deadline {
                var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let wait = Int32(max(1, deadline - MonotonicClock.nowMs()))
                guard poll(&descriptor, 1, wait) > 0 else { continue }
                var buffer = [UInt8](repeating: 0, count: 1_500)
                let count = recv(fd, &buffer, buffer.count, 0)
                guard count > 0 else { continue }
                guard let message = try? STUNMessage(bytes: Array(buffer.prefix(count))),
                    message.transactionID == transaction, message.messageClass == .success,
                    let value = message.attribute(STUNMessage.AttributeType.xorMappedAddress),
                    let mapped = XORMappedAddress.decode(value, transactionID: transaction), let v4 = mapped.ipv4
                else { continue }
                var address = in_addr(s_addr: v4.bigEndian)
                var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
                guard inet_ntop(AF_INET, &address, &text, socklen_t(text.count)) != nil else { continue }
                return String(cString: text)
            }
        }
        throw Failure(description: "no Binding answer from \(server) within \(timeoutMs) ms")
    }
}
