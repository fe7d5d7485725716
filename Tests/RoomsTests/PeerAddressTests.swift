import Testing
import Foundation
@testable import Rooms

/// Peer addresses are built per datagram from the socket's binary address (no string formatting) and
/// must still compare, hash and print as "host:port" did.
@Suite struct PeerAddressTests {
    @Test func binaryAndTextualIPv4AddressesAreEqualAndPrintTheSame() {
        let text = PeerAddress(host: "192.0.2.10", port: 40000)
        let binary = PeerAddress(ipv4: 0xC000_020A, port: 40000)
        #expect(text == binary)
        #expect(text.hashValue == binary.hashValue)
        #expect(binary.description == "192.0.2.10:40000")
        #expect(binary.host == "192.0.2.10")
        #expect(binary.ipv4 == 0xC000_020A)
        #expect(binary != PeerAddress(ipv4: 0xC000_020A, port: 40001))
    }

    @Test func ipv6AddressesRoundTripInCanonicalForm() throws {
        let loopback = PeerAddress(ipv6High: 0, low: 1, port: 5004)
        #expect(loopback == PeerAddress(host: "::1", port: 5004))
        #expect(loopback.description == "::1:5004")
        let doc = PeerAddress(host: "2001:db8::7", port: 9)
        #expect(doc == PeerAddress(ipv6High: 0x2001_0DB8_0000_0000, low: 7, port: 9))
        #expect(doc.host == "2001:db8::7")
        #expect(doc.ipv4 == nil)
        let raw = try #require(doc.ipv6)
        #expect(PeerAddress(ipv6: raw, port: 9) == doc)
        #expect(
            withUnsafeBytes(of: raw) { Array($0) } == [0x20, 0x01, 0x0D, 0xB8] + Array(repeating: 0, count: 11) + [7])
        #expect(PeerAddress(ipv4: 1, port: 9).ipv6 == nil)
    }

    @Test func sameHostIgnoresThePortAndNamesStayText() {
        let rtp = PeerAddress(host: "198.51.100.7", port: 40000)
        #expect(rtp.hasSameHost(as: PeerAddress(ipv4: 0xC633_6407, port: 40001)))
        #expect(!rtp.hasSameHost(as: PeerAddress(host: "198.51.100.8", port: 40000)))
        let unknown = PeerAddress(host: "?", port: 0)
        #expect(unknown.description == "?:0")
        #expect(!unknown.hasSameHost(as: rtp))
    }

    @Test func aLinkLocalAddressKeepsItsScope() {
        let peer = PeerAddress(host: "fe80::1%2", port: 9)
        #expect(peer.ipv6Scope == 2)
        #expect(peer.host == "fe80::1%2")
        #expect(peer == PeerAddress(ipv6High: 0xFE80_0000_0000_0000, low: 1, scope: 2, port: 9))
        // The same address on another interface, or without one, is another host.
        #expect(peer != PeerAddress(host: "fe80::1%3", port: 9))
        #expect(!peer.hasSameHost(as: PeerAddress(host: "fe80::1", port: 9)))
        #expect(PeerAddress(host: "fe80::1", port: 9).ipv6Scope == 0)
        #expect(PeerAddress(host: "fe80::1%lo", port: 9).ipv6Scope == if_nametoindex("lo"))
        #expect(PeerAddress(host: "fe80::1%nosuchif9", port: 9).ipv6 == nil)  // not an address: kept as a name
        #expect(PeerAddress(ipv4: 1, port: 9).ipv6Scope == 0)
    }
}
