import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
import Rooms
@testable import Server

/// Real sockets on loopback: a datagram sent with `sendto` is queued at the receiver before the call returns,
/// so what one non-blocking `recvmmsg` sees is exact.
@Suite struct UDPSocketTests {
    /// Containers without IPv6 cannot run the IPv6 tests.
    static let hasIPv6 = (try? UDPSocket(host: "::1", port: 0)) != nil

    /// A link-local IPv6 address of this machine and its interface index, from /proc/net/if_inet6
    /// ("fe80…0001 04 40 20 80 eth0": address, index, prefix, scope 0x20 = link); nil when there is none.
    static let linkLocal: (address: String, index: UInt32)? = {
        guard let table = try? String(contentsOfFile: "/proc/net/if_inet6", encoding: .utf8) else { return nil }
        for line in table.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, fields[3] == "20", fields[0].count == 32, let index = UInt32(fields[1], radix: 16)
            else { continue }
            let hex = Array(fields[0])
            let groups = stride(from: 0, to: 32, by: 4).map { String(hex[$0..<$0 + 4]) }
            return (groups.joined(separator: ":"), index)
        }
        return nil
    }()

    @Test func aBatchTakesEveryWaitingDatagramWithItsSenderInOrder() throws {
        let receiver = try UDPSocket(host: "127.0.0.1", port: 0)
        let sender = try UDPSocket(host: "127.0.0.1", port: 0)
        let target = PeerAddress(host: "127.0.0.1", port: receiver.localPort)
        for index in 0..<20 { #expect(sender.send([UInt8(index), 0xAB, UInt8(index * 2)], to: target)) }
        let batch = DatagramBatch(capacity: 16, slotSize: 2048)
        var seen: [[UInt8]] = []
        for expected in [16, 4, 0] {
            #expect(try receiver.receive(into: batch) == expected)
            for index in 0..<batch.count {
                batch.withDatagram(index) { bytes, peer, truncated in
                    seen.append(Array(bytes))
                    #expect(peer == PeerAddress(ipv4: 0x7F00_0001, port: sender.localPort))
                    #expect(!truncated)
                }
            }
        }
        #expect(seen == (0..<20).map { [UInt8($0), 0xAB, UInt8($0 * 2)] })
    }

    @Test func aDatagramLongerThanItsSlotArrivesCutAndFlagged() throws {
        let receiver = try UDPSocket(host: "127.0.0.1", port: 0)
        let sender = try UDPSocket(host: "127.0.0.1", port: 0)
        let target = PeerAddress(host: "127.0.0.1", port: receiver.localPort)
        let long = (0..<100).map { UInt8($0) }
        #expect(sender.send(long, to: target))
        #expect(sender.send([7], to: target))
        let batch = DatagramBatch(capacity: 4, slotSize: 64)
        #expect(try receiver.receive(into: batch) == 2)
        batch.withDatagram(0) { bytes, _, truncated in
            #expect(Array(bytes) == Array(long.prefix(64)))
            #expect(truncated)
        }
        batch.withDatagram(1) { bytes, _, truncated in
            #expect(Array(bytes) == [7])
            #expect(!truncated)
        }
    }

    @Test func aPortAlreadyBoundIsAnErrorWithTheSystemsMessage() throws {
        let first = try UDPSocket(host: "127.0.0.1", port: 0)
        #expect(throws: UDPSocketError(call: "bind 127.0.0.1:\(first.localPort)", code: EADDRINUSE)) {
            try UDPSocket(host: "127.0.0.1", port: first.localPort)
        }
        let error = UDPSocketError(call: "bind 127.0.0.1:\(first.localPort)", code: EADDRINUSE)
        #expect(error.description == "bind 127.0.0.1:\(first.localPort): Address already in use")
    }

    @Test func anUnknownHostIsAnErrorWithTheResolversMessage() throws {
        let error = try #require(
            #expect(throws: UDPSocketError.self) { try UDPSocket(host: "no-such-host.invalid", port: 0) })
        #expect(error.call == "resolve no-such-host.invalid")
        #expect(!error.message.isEmpty && error.message != String(cString: strerror(EINVAL)))
    }

    @Test(.enabled(if: hasIPv6)) func aDualStackSocketGivesIPv4PeersAsIPv4AndAnswersThem() throws {
        let server = try UDPSocket(host: "::", port: 0)
        let client = try UDPSocket(host: "127.0.0.1", port: 0)
        #expect(client.send([1, 2, 3], to: PeerAddress(host: "127.0.0.1", port: server.localPort)))
        let batch = DatagramBatch(capacity: 2, slotSize: 16)
        #expect(try server.receive(into: batch) == 1)
        let peer = try #require(batch.withDatagram(0) { _, peer, _ in peer })
        #expect(peer == PeerAddress(ipv4: 0x7F00_0001, port: client.localPort))
        #expect(server.send([9, 8], to: peer))
        #expect(try client.receive(into: batch) == 1)
        batch.withDatagram(0) { bytes, from, _ in
            #expect(Array(bytes) == [9, 8])
            #expect(from?.port == server.localPort)
        }
    }

    @Test(.enabled(if: hasIPv6)) func ipv6PeersRoundTrip() throws {
        let server = try UDPSocket(host: "::1", port: 0)
        let client = try UDPSocket(host: "::1", port: 0)
        #expect(client.send([5], to: PeerAddress(host: "::1", port: server.localPort)))
        let batch = DatagramBatch(capacity: 2, slotSize: 16)
        #expect(try server.receive(into: batch) == 1)
        #expect(batch.withDatagram(0) { _, peer, _ in peer } == PeerAddress(host: "::1", port: client.localPort))
    }

    @Test(.enabled(if: linkLocal != nil)) func aLinkLocalPeerKeepsItsInterfaceAndIsAnsweredThroughIt() throws {
        let (address, index) = try #require(Self.linkLocal)
        let server = try UDPSocket(host: "::", port: 0)
        let client = try UDPSocket(host: "\(address)%\(index)", port: 0)
        #expect(client.send([1], to: PeerAddress(host: "\(address)%\(index)", port: server.localPort)))
        let batch = DatagramBatch(capacity: 2, slotSize: 16)
        #expect(try server.receive(into: batch) == 1)
        let peer = try #require(batch.withDatagram(0) { _, peer, _ in peer })
        #expect(peer.ipv6Scope == index)
        #expect(peer == PeerAddress(host: "\(address)%\(index)", port: client.localPort))
        // The answer is addressed with the peer's interface (a remote link-local peer is unreachable without it;
        // this one is our own address, which the kernel would deliver either way).
        var storage = sockaddr_storage()
        #expect(UDPSocket.socketAddress(peer, family: AF_INET6, into: &storage) != nil)
        #expect(withUnsafeBytes(of: storage) { $0.load(as: sockaddr_in6.self).sin6_scope_id } == index)
        #expect(server.send([7], to: peer))
        #expect(try client.receive(into: batch) == 1)
        batch.withDatagram(0) { bytes, _, _ in #expect(Array(bytes) == [7]) }
    }

    @Test func addressesTheSocketCannotReachAreNotSent() throws {
        let v4 = try UDPSocket(host: "127.0.0.1", port: 0)
        #expect(!v4.send([1], to: PeerAddress(host: "::1", port: 9)))
        #expect(!v4.send([1], to: PeerAddress(host: "somewhere.example", port: 9)))
    }
}
