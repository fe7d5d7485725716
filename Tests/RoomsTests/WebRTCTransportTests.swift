import DTLS
import ICE
import Logging
import RTP
import SRTP
import Testing

@testable import Rooms

/// One WebRTC participant's transport on the shared port: a browser's ICE check proves an address, DTLS runs only
/// from proven addresses, and SRTP keyed from the handshake is the only media the router takes from it.
@Suite struct WebRTCTransportTests {
    static let serverContext = try! DTLSContext(certificate: DTLSCertificate.generate(commonName: "cohost"))
    static let browserIdentity = try! DTLSCertificate.generate(commonName: "browser")
    static let browser = PeerAddress(host: "127.0.0.1", port: 50_000)
    static let stranger = PeerAddress(host: "127.0.0.1", port: 50_002)

    static let parameters = WebRTCParameters(
        localUfrag: "cohoUfrg", localPassword: "cohostPassword0123456789", remoteUfrag: "brws",
        remotePassword: "browserPassword0123456789",
        fingerprint: .init(algorithm: "sha-256", digest: browserIdentity.sha256), dtlsServer: true,
        midExtension: 1, midKinds: ["0": .audio])

    /// A browser's connectivity check, signed with Cohost's password.
    static func check(nominate: Bool = true, username: String = "cohoUfrg:brws", id: UInt8 = 7) -> [UInt8] {
        var attributes: [STUNMessage.Attribute] = [
            .init(type: STUNMessage.AttributeType.username, value: Array(username.utf8)),
            .init(type: STUNMessage.AttributeType.priority, value: [0x6e, 0, 1, 0xff]),
            .init(type: STUNMessage.AttributeType.iceControlling, value: [1, 2, 3, 4, 5, 6, 7, 8]),
        ]
        if nominate { attributes.append(.init(type: STUNMessage.AttributeType.useCandidate, value: [])) }
        return STUNMessage(
            method: STUNMessage.bindingMethod, messageClass: .request, transactionID: Array(repeating: id, count: 12),
            attributes: attributes
        ).serialized(integrityKey: Array("cohostPassword0123456789".utf8), fingerprint: true)
    }

    func browserEndpoint() throws -> DTLSEndpoint {
        try DTLSEndpoint(
            context: DTLSContext(certificate: Self.browserIdentity), role: .client,
            peerFingerprint: ("sha-256", Self.serverContext.certificate.sha256))
    }

    /// Runs the handshake between `transport` and a browser endpoint at `from`; returns the browser's end.
    func handshake(
        _ transport: WebRTCTransport, from peer: PeerAddress = browser
    ) throws -> (DTLSEndpoint, [WebRTCTransport.Event]) {
        let client = try browserEndpoint()
        var events: [WebRTCTransport.Event] = []
        var toServer = client.start()
        for _ in 0..<10 where !toServer.isEmpty {
            var toClient: [[UInt8]] = []
            for datagram in toServer {
                let (flight, event) = transport.handleDTLS(datagram, from: peer)
                toClient += flight
                if let event { events.append(event) }
            }
            toServer = toClient.flatMap { client.receive($0) }
        }
        return (client, events)
    }

    @Test func aValidCheckIsAnsweredProvesItsAddressAndNominatesIt() throws {
        let transport = try WebRTCTransport(parameters: Self.parameters, context: Self.serverContext, nowMs: 0)
        #expect(!transport.accepts(Self.browser) && transport.destination == nil)
        let (response, proven, _, flight) = transport.handleSTUN(Self.check(), from: Self.browser, nowMs: 10)
        let answer = try STUNMessage(bytes: try #require(response))
        #expect(answer.messageClass == .success && answer.transactionID == Array(repeating: 7, count: 12))
        let mapped = try #require(answer.attribute(STUNMessage.AttributeType.xorMappedAddress))
        let decoded = try #require(XORMappedAddress.decode(mapped, transactionID: answer.transactionID))
        #expect(decoded.ipv4 == 0x7F00_0001 && decoded.port == 50_000)
        #expect(proven && flight.isEmpty)
        #expect(transport.accepts(Self.browser) && transport.destination == Self.browser)
        #expect(!transport.accepts(Self.stranger))
    }

    @Test func aCheckWithAnotherUsernameIsIgnoredAndProvesNothing() throws {
        let transport = try WebRTCTransport(parameters: Self.parameters, context: Self.serverContext, nowMs: 0)
        let (response, proven, _, _) = transport.handleSTUN(
            Self.check(username: "cohoUfrg:evil"), from: Self.stranger, nowMs: 10)
        #expect(response == nil && !proven && !transport.accepts(Self.stranger))
        #expect(transport.refusals.stun == 1)
    }

    @Test func theHandshakeFromAProvenAddressPublishesTheKeysBothSidesShare() throws {
        let transport = try WebRTCTransport(parameters: Self.parameters, context: Self.serverContext, nowMs: 0)
        _ = transport.handleSTUN(Self.check(), from: Self.browser, nowMs: 10)
        let (client, events) = try handshake(transport)
        #expect(events == [.connected])
        let keys = try #require(transport.keys.current)
        #expect(keys.remote == client.keys?.local && keys.local == client.keys?.remote)
        #expect(transport.keys.session(.inbound) != nil)
    }

    @Test func closeNotifyFromTheBrowserIsTheEndOfTheTransport() throws {
        let transport = try WebRTCTransport(parameters: Self.parameters, context: Self.serverContext, nowMs: 0)
        _ = transport.handleSTUN(Self.check(), from: Self.browser, nowMs: 10)
        let (client, _) = try handshake(transport)
        var events: [WebRTCTransport.Event] = []
        for datagram in client.close() {
            if let event = transport.handleDTLS(datagram, from: Self.browser).event { events.append(event) }
        }
        #expect(events == [.closed])
    }

    @Test func consentLastsThirtySecondsFromTheLastAnswerToCohostsOwnChecks() throws {
        let transport = try WebRTCTransport(parameters: Self.parameters, context: Self.serverContext, nowMs: 0)
        _ = transport.handleSTUN(Self.check(), from: Self.browser, nowMs: 1_000)
        let due = transport.consentCheck(nowMs: 1_000)
        let check = try #require(due)
        #expect(check.to == Self.browser)
        let request = try STUNMessage(bytes: check.bytes)
        #expect(request.username == "brws:cohoUfrg")
        let answer = STUNMessage(
            method: STUNMessage.bindingMethod, messageClass: .success, transactionID: request.transactionID
        ).serialized(integrityKey: Array(Self.parameters.remotePassword.utf8), fingerprint: true)
        // From another address it renews nothing; from the checked one it does.
        #expect(!transport.handleConsentAnswer(answer, from: Self.stranger, nowMs: 20_000))
        #expect(transport.handleConsentAnswer(answer, from: Self.browser, nowMs: 20_000))
        // The browser's own checks go on, but they do not renew consent: 30 s after the answer it is gone.
        _ = transport.handleSTUN(Self.check(id: 8), from: Self.browser, nowMs: 45_000)
        #expect(transport.tick(nowMs: 50_000).event == nil)
        #expect(transport.tick(nowMs: 50_001).event == .consentExpired)
        // Reported once.
        #expect(transport.tick(nowMs: 60_000).event == nil)
    }

    @Test func anICERestartTakesNewCredentialsAndKeepsSendingUntilANewCheckNominates() throws {
        let transport = try WebRTCTransport(parameters: Self.parameters, context: Self.serverContext, nowMs: 0)
        _ = transport.handleSTUN(Self.check(), from: Self.browser, nowMs: 10)
        let fresh = transport.restartICE(remoteUfrag: "nwUf", remotePassword: "nwPasswordOfTheBrowser0", nowMs: 20)
        #expect(transport.localUfrag == fresh.ufrag && fresh.ufrag != "cohoUfrg" && transport.remoteUfrag == "nwUf")
        #expect(transport.destination == Self.browser)
        // The old credentials are refused now.
        #expect(transport.handleSTUN(Self.check(id: 9), from: Self.stranger, nowMs: 30).response == nil)
        let check = STUNMessage(
            method: STUNMessage.bindingMethod, messageClass: .request, transactionID: Array(repeating: 3, count: 12),
            attributes: [
                .init(type: STUNMessage.AttributeType.username, value: Array("\(fresh.ufrag):nwUf".utf8)),
                .init(type: STUNMessage.AttributeType.useCandidate, value: []),
            ]
        ).serialized(integrityKey: Array(fresh.password.utf8), fingerprint: true)
        #expect(transport.handleSTUN(check, from: Self.stranger, nowMs: 40).response != nil)
        #expect(transport.destination == Self.stranger && transport.accepts(Self.stranger))
    }

    @Test func cohostAsTheDTLSClientStartsItsHandshakeOnceACheckProvedTheBrowser() throws {
        var parameters = Self.parameters
        parameters.dtlsServer = false
        let transport = try WebRTCTransport(parameters: parameters, context: Self.serverContext, nowMs: 0)
        let (_, _, _, flight) = transport.handleSTUN(Self.check(), from: Self.browser, nowMs: 10)
        // A ClientHello.
        #expect(flight.first?[0] == 22 && flight.first?[DTLSRecordPacker.headerSize] == 1)
    }

    @Test func theTableRoutesChecksByUfragAndDTLSOnlyFromProvenAddresses() throws {
        let transport = try WebRTCTransport(parameters: Self.parameters, context: Self.serverContext, nowMs: 0)
        let participant = try Participant(
            userId: "web", sessionID: 1, audio: nil, video: nil, webRTC: transport, nowMs: 0,
            logger: Logger(label: "t"))
        let table = WebRTCTable()
        table.add(transport, participant: participant, room: "r")
        #expect(table.entry(for: Self.browser) == nil)
        #expect(table.handleSTUN(Self.check(username: "nobody:brws"), from: Self.browser, nowMs: 1) == nil)
        let handled = try #require(table.handleSTUN(Self.check(), from: Self.browser, nowMs: 1))
        #expect(handled.entry.participant === participant)
        #expect(table.entry(for: Self.browser)?.participant === participant)
        #expect(table.entry(for: Self.stranger) == nil)
        #expect(table.snapshot.stunIgnored == 1)
        #expect(table.remove(participant) === transport)
        #expect(table.entry(for: Self.browser) == nil && table.count == 0)
    }

    @Test func theTableForgetsAddressesTheTransportNoLongerAccepts() throws {
        let transport = try WebRTCTransport(parameters: Self.parameters, context: Self.serverContext, nowMs: 0)
        let participant = try Participant(
            userId: "web", sessionID: 1, audio: nil, video: nil, webRTC: transport, nowMs: 0,
            logger: Logger(label: "t"))
        let table = WebRTCTable()
        table.add(transport, participant: participant, room: "r")
        let ports = 50_010..<50_020
        for (i, port) in ports.enumerated() {
            _ = table.handleSTUN(
                Self.check(id: UInt8(i)), from: PeerAddress(host: "127.0.0.1", port: port), nowMs: Int64(i))
        }
        // Ten addresses checked, four kept, by the transport and by the table alike.
        let kept = ports.filter { table.entry(for: PeerAddress(host: "127.0.0.1", port: $0)) != nil }
        #expect(kept == Array(50_016..<50_020))
        #expect(kept.allSatisfy { transport.accepts(PeerAddress(host: "127.0.0.1", port: $0)) })
    }

    @Test func theRouterTakesSRTPOnlyFromAProvenAddressAndOnlyAfterTheHandshake() throws {
        let transport = try WebRTCTransport(parameters: Self.parameters, context: Self.serverContext, nowMs: 0)
        let audio = NegotiatedStream(
            kind: .audio, ssrc: 0xB0B0, payloadType: 111, clockRate: 48_000, codec: "opus", srtp: nil)
        let participant = try Participant(
            userId: "web", sessionID: 1, audio: audio, video: nil, webRTC: transport, nowMs: 0,
            logger: Logger(label: "t"))
        let router = StreamRouter()
        #expect(router.register([.init(ssrc: 0xB0B0)], room: "r", participant: participant) == nil)
        let packet = RTPPacket(payloadType: 111, sequenceNumber: 1, timestamp: 960, ssrc: 0xB0B0, payload: [0xF8, 1])
        // Not proven yet.
        guard case .dropped = router.route(packet.serialized(), from: Self.browser) else {
            Issue.record("RTP from an unproven address routed")
            return
        }
        #expect(router.snapshot.wrongSource == 1)
        _ = transport.handleSTUN(Self.check(), from: Self.browser, nowMs: 10)
        // Proven, but no keys yet: nothing decrypts.
        guard case .dropped = router.route(packet.serialized(), from: Self.browser) else {
            Issue.record("RTP routed before the handshake")
            return
        }
        #expect(router.snapshot.srtpFailures == 1)
        let (client, _) = try handshake(transport)
        let keys = try #require(client.keys)
        let protect = try SRTPSession(profile: keys.profile, masterKeyAndSalt: keys.local, direction: .outbound)
        var wire: [UInt8] = []
        try protect.protectRTP(packet.serialized(), into: &wire)
        guard case .rtp(let owner, _) = router.route(wire, from: Self.browser) else {
            Issue.record("keyed SRTP from the proven address dropped")
            return
        }
        #expect(owner === participant)
        // The same packet from an address no check proved is dropped, however well it is encrypted.
        var again: [UInt8] = []
        try protect.protectRTP(
            RTPPacket(payloadType: 111, sequenceNumber: 2, timestamp: 1920, ssrc: 0xB0B0, payload: [0xF8]).serialized(),
            into: &again)
        guard case .dropped = router.route(again, from: Self.stranger) else {
            Issue.record("SRTP from an unproven address routed")
            return
        }
        #expect(router.snapshot.wrongSource == 2)
        // Feedback goes to the nominated address, protected.
        var scratch: [UInt8] = []
        let rr = serializeCompoundRTCP([.receiverReport(ReceiverReport(ssrc: 1, reports: []))])
        let route = try #require(router.protectFeedback(rr, about: 0xB0B0, into: &scratch))
        #expect(route.to == Self.browser && route.protected && scratch.count > rr.count)
    }
}

extension WebRTCTransportTests {
    @Test func anSSRCTheOfferDidNotListIsLearntFromTheMIDOfItsFirstAuthenticPacket() throws {
        let transport = try WebRTCTransport(parameters: Self.parameters, context: Self.serverContext, nowMs: 0)
        var audio = NegotiatedStream(
            kind: .audio, ssrc: 0x5151, payloadType: 111, clockRate: 48_000, codec: "opus", srtp: nil)
        audio.learnFromMID = "0"
        let participant = try Participant(
            userId: "web", sessionID: 1, audio: audio, video: nil, webRTC: transport, nowMs: 0,
            logger: Logger(label: "t"))
        let router = StreamRouter()
        #expect(router.register([.init(ssrc: 0x5151, learning: .mid("0"))], room: "r", participant: participant) == nil)
        _ = transport.handleSTUN(Self.check(), from: Self.browser, nowMs: 10)
        let (client, _) = try handshake(transport)
        let keys = try #require(client.keys)
        let protect = try SRTPSession(profile: keys.profile, masterKeyAndSalt: keys.local, direction: .outbound)
        func packet(mid: String, sequence: UInt16) throws -> [UInt8] {
            // One-byte header extension: MID (id 1, from `parameters`).
            let element = [UInt8(0x10 | (mid.utf8.count - 1))] + Array(mid.utf8)
            let padded = element + [UInt8](repeating: 0, count: (4 - element.count % 4) % 4)
            let plain = RTPPacket(
                payloadType: 111, sequenceNumber: sequence, timestamp: 960, ssrc: 0xCAFE, extensionProfile: 0xBEDE,
                extensionData: padded, payload: [0xF8, 1]
            ).serialized()
            var wire: [UInt8] = []
            try protect.protectRTP(plain, into: &wire)
            return wire
        }
        // Another line's MID binds nothing.
        guard case .dropped = router.route(try packet(mid: "1", sequence: 1), from: Self.browser) else {
            Issue.record("a packet of another MID was bound")
            return
        }
        #expect(router.snapshot.unknownSSRC == 1)
        var scratch = DatagramScratch()
        guard
            case .rtp(let owner, _) = router.route(
                try packet(mid: "0", sequence: 2), from: Self.browser, scratch: &scratch)
        else {
            Issue.record("the packet with the line's MID was not routed")
            return
        }
        #expect(owner === participant)
        // The participant sees its stand-in; the wire SSRC is what its reports name.
        #expect(scratch.packet.ssrc == 0x5151)
        #expect(participant.wireSSRCs == [0xCAFE])
        #expect(participant.audio?.receptionReport(nowMs: 100).ssrc == 0xCAFE)
        // Later packets need no MID.
        var next: [UInt8] = []
        try protect.protectRTP(
            RTPPacket(payloadType: 111, sequenceNumber: 3, timestamp: 1920, ssrc: 0xCAFE, payload: [0xF8]).serialized(),
            into: &next)
        guard case .rtp = router.route(next, from: Self.browser) else {
            Issue.record("the learnt SSRC was not kept")
            return
        }
        router.unregister(participant)
        #expect(router.bindingCount == 0)
    }
}

@Suite struct SenderBitrateLimitTests {
    @Test func startsAtTheCapFallsWithLossAndClimbsBackToTheCap() {
        var limit = SenderBitrateLimit(capKbps: 300)
        #expect(limit.current == 300_000)
        // 25 % loss while 280 kb/s arrive: 280 × (1 − 0.125).
        limit.update(fractionLost: 64, receivedBps: 280_000)
        #expect(limit.current == 245_000)
        // Moderate loss holds it.
        limit.update(fractionLost: 10, receivedBps: 240_000)
        #expect(limit.current == 245_000)
        // No loss: +8 % + 1 kb/s a report, never above the cap.
        limit.update(fractionLost: 0, receivedBps: 240_000)
        #expect(limit.current == 265_600)
        for _ in 0..<5 { limit.update(fractionLost: 0, receivedBps: 260_000) }
        #expect(limit.current == 300_000)
    }

    @Test func heavyLossNeverGoesBelowTheFloor() {
        var limit = SenderBitrateLimit(capKbps: 150)
        for _ in 0..<20 { limit.update(fractionLost: 255, receivedBps: 50_000) }
        #expect(limit.current == SenderBitrateLimit.floor)
    }
}
