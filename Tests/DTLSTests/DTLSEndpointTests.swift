import COpenSSL
import SRTP
import Testing

@testable import DTLS

/// Two endpoints of this module talking through memory: each datagram one side returns is fed to the other.
@Suite struct DTLSEndpointTests {
    static let serverIdentity = try! DTLSCertificate.generate(commonName: "server")
    static let clientIdentity = try! DTLSCertificate.generate(commonName: "client")

    struct Pair {
        let server: DTLSEndpoint
        let client: DTLSEndpoint
        /// Every datagram each side sent, in order.
        var toServer: [[UInt8]] = []
        var toClient: [[UInt8]] = []

        /// Runs flights until neither side has anything to send.
        mutating func run() {
            var inFlight = client.start()
            var round = 0
            while !inFlight.isEmpty && round < 20 {
                toServer += inFlight
                let back = inFlight.flatMap { server.receive($0) }
                toClient += back
                inFlight = back.flatMap { client.receive($0) }
                round += 1
            }
        }
    }

    static func pair(
        serverSeesClient: DTLSCertificate = clientIdentity, clientSeesServer: DTLSCertificate = serverIdentity
    ) throws -> Pair {
        let server = try DTLSEndpoint(
            context: DTLSContext(certificate: serverIdentity), role: .server,
            peerFingerprint: ("sha-256", serverSeesClient.sha256))
        server.cookieSubject = Array("127.0.0.1:5000".utf8)
        let client = try DTLSEndpoint(
            context: DTLSContext(certificate: clientIdentity), role: .client,
            peerFingerprint: ("sha-256", clientSeesServer.sha256))
        return Pair(server: server, client: client)
    }

    @Test func aHandshakeGivesBothSidesTheSameSRTPKeysCrossed() throws {
        var p = try Self.pair()
        p.run()
        #expect(p.server.state == .connected)
        #expect(p.client.state == .connected)
        let server = try #require(p.server.keys)
        let client = try #require(p.client.keys)
        // GCM is offered first by both sides.
        #expect(server.profile == .aeadAes128Gcm)
        #expect(server.local.count == 28)
        #expect(server.local == client.remote)
        #expect(server.remote == client.local)
        #expect(server.local != server.remote)
    }

    @Test func theExportedKeysProtectAndUnprotectSRTPBetweenTheSides() throws {
        var p = try Self.pair()
        p.run()
        let server = try #require(p.server.keys)
        let client = try #require(p.client.keys)
        let send = try SRTPSession(profile: client.profile, masterKeyAndSalt: client.local, direction: .outbound)
        let receive = try SRTPSession(profile: server.profile, masterKeyAndSalt: server.remote, direction: .inbound)
        let rtp: [UInt8] = [0x80, 111, 0, 1, 0, 0, 0, 160, 0x12, 0x34, 0x56, 0x78, 1, 2, 3, 4, 5]
        var protected: [UInt8] = []
        try send.protectRTP(rtp, into: &protected)
        var clear: [UInt8] = []
        try receive.unprotectRTP(protected, into: &clear)
        #expect(clear == rtp)
    }

    @Test func theServerAsksForACookieBeforeItKeepsAnyState() throws {
        var p = try Self.pair()
        p.run()
        // The server's first datagram is one handshake record holding a HelloVerifyRequest (type 3).
        let first = try #require(p.toClient.first)
        #expect(first[0] == 22)
        #expect(first[DTLSRecordPacker.headerSize] == 3)
        // The client says ClientHello twice: without the cookie, then with it.
        #expect(p.toServer[0][DTLSRecordPacker.headerSize] == 1)
        #expect(p.toServer[1][DTLSRecordPacker.headerSize] == 1)
    }

    @Test func aCertificateThatIsNotTheOfferedOneFailsTheHandshake() throws {
        let stranger = try DTLSCertificate.generate(commonName: "stranger")
        var p = try Self.pair(serverSeesClient: stranger)
        p.run()
        #expect(p.server.state == .failed("the peer's certificate does not match the offer's a=fingerprint"))
        #expect(p.server.keys == nil)
    }

    /// OpenSSL 3 servers refuse a client's renegotiation by default; a client follows a server's HelloRequest unless
    /// told not to. Cohost is the DTLS client when the offer says `a=setup:passive`: a peer that is the server asks
    /// for a second handshake, in which it could show a certificate the fingerprint never checked.
    @Test func aPeerServersRenegotiationIsRefusedAndTheSessionKeepsItsKeys() throws {
        var p = try Self.pair()
        p.run()
        let keys = try #require(p.client.keys)
        SSL_clear_options(p.server.ssl, cohost_ssl_op_no_renegotiation())
        #expect(SSL_renegotiate(p.server.ssl) == 1)
        _ = SSL_do_handshake(p.server.ssl)
        let helloRequest = p.server.drain()
        #expect(!helloRequest.isEmpty)
        let answer = helloRequest.flatMap { p.client.receive($0) }
        // A no_renegotiation warning alert (record type 21), no ClientHello (a handshake record, 22).
        #expect(!answer.isEmpty && answer.allSatisfy { $0[0] == 21 }, "\(answer.map { $0[0] })")
        #expect(p.client.state == .connected)
        #expect(p.client.keys == keys)
    }

    @Test func closeNotifyFromThePeerClosesTheEndpoint() throws {
        var p = try Self.pair()
        p.run()
        let alert = p.client.close()
        #expect(!alert.isEmpty)
        #expect(p.client.state == .closed)
        for datagram in alert { _ = p.server.receive(datagram) }
        #expect(p.server.state == .closed)
    }

    @Test func garbageDuringTheHandshakeIsDiscardedAndTheHandshakeStillCompletes() throws {
        var p = try Self.pair()
        _ = p.server.receive([22, 0xfe, 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 40, 1, 2, 3])
        p.run()
        #expect(p.server.state == .connected)
        #expect(p.client.state == .connected)
    }

    @Test func aLostFlightIsSentAgainWhenItsTimerFires() throws {
        let p = try Self.pair()
        let hello = p.client.start()
        #expect(!hello.isEmpty)
        let timeout = try #require(p.client.timeoutRemainingMs)
        #expect(timeout > 0 && timeout <= 1000)
        // Not expired yet: nothing to resend.
        #expect(p.client.handleTimeout().isEmpty)
    }

    @Test func aCertificateAndKeyLoadFromPEMAndKeepTheirFingerprint() throws {
        let pem = try Self.serverIdentity.pem()
        let loaded = try DTLSCertificate(certificatePEM: pem.certificate, keyPEM: pem.key)
        #expect(loaded.sha256 == Self.serverIdentity.sha256)
        #expect(loaded.fingerprintAttribute.hasPrefix("sha-256 "))
        #expect(loaded.fingerprintAttribute.count == "sha-256 ".count + 32 * 3 - 1)
        #expect(throws: DTLSError.self) { try DTLSCertificate(certificatePEM: "nonsense", keyPEM: pem.key) }
    }
}

@Suite struct DTLSRecordPackerTests {
    static func record(_ type: UInt8, length: Int, fill: UInt8) -> [UInt8] {
        [type, 0xfe, 0xfd, 0, 0, 0, 0, 0, 0, 0, 1, UInt8(length >> 8), UInt8(length & 0xff)]
            + [UInt8](repeating: fill, count: length)
    }

    @Test func recordsArePackedWholeIntoDatagramsNoLargerThanTheMTU() {
        let a = Self.record(22, length: 500, fill: 1)
        let b = Self.record(22, length: 500, fill: 2)
        let c = Self.record(20, length: 1, fill: 3)
        let out = DTLSRecordPacker.datagrams(a + b + c, mtu: 1030)
        #expect(out == [a + b, c])
        #expect(out.map(\.count) == [1026, 14])
    }

    @Test func aRecordLongerThanTheMTUTravelsAlone() {
        let big = Self.record(23, length: 1500, fill: 9)
        let small = Self.record(21, length: 2, fill: 0)
        #expect(DTLSRecordPacker.datagrams(small + big + small, mtu: 1200) == [small, big, small])
    }

    @Test func aTruncatedTailIsKeptAsItIs() {
        let a = Self.record(22, length: 10, fill: 1)
        #expect(DTLSRecordPacker.datagrams(a + [22, 0xfe], mtu: 1200) == [a + [22, 0xfe]])
    }
}
