import Testing
@testable import ICE

@Suite struct ICELiteAgentTests {
    static let local = (ufrag: "evtj", password: "VOkJxbRl1RmTxUk/WvJxBt")

    /// A browser's check: USERNAME ours:theirs, PRIORITY, ICE-CONTROLLING, optionally USE-CANDIDATE, signed with our
    /// password and fingerprinted.
    static func check(
        username: String = "evtj:h6vY", password: String = local.password, nominate: Bool = false, id: UInt8 = 1
    ) -> [UInt8] {
        var attributes: [STUNMessage.Attribute] = [
            .init(type: STUNMessage.AttributeType.username, value: Array(username.utf8)),
            .init(type: STUNMessage.AttributeType.priority, value: [0x6e, 0x00, 0x01, 0xff]),
            .init(type: STUNMessage.AttributeType.iceControlling, value: [1, 2, 3, 4, 5, 6, 7, 8]),
        ]
        if nominate { attributes.append(.init(type: STUNMessage.AttributeType.useCandidate, value: [])) }
        return STUNMessage(
            method: STUNMessage.bindingMethod, messageClass: .request, transactionID: Array(repeating: id, count: 12),
            attributes: attributes
        ).serialized(integrityKey: Array(password.utf8), fingerprint: true)
    }

    func agent() -> ICELiteAgent<String> {
        ICELiteAgent(localUfrag: Self.local.ufrag, localPassword: Self.local.password, remoteUfrag: "h6vY", nowMs: 0)
    }

    @Test func aValidCheckIsAnsweredWithItsSourceAndSignedWithOurPassword() throws {
        var a = agent()
        let outcome = a.handle(Self.check(), from: "192.0.2.1:32853", nowMs: 1000) { _ in
            XORMappedAddress.value(ipv4: 0xC000_0201, port: 32853)
        }
        guard case .respond(let bytes) = outcome else {
            Issue.record("no response")
            return
        }
        let response = try STUNMessage(bytes: bytes)
        #expect(response.messageClass == .success && response.transactionID == Array(repeating: 1, count: 12))
        #expect(response.hasValidIntegrity(in: bytes, key: Array(Self.local.password.utf8)))
        #expect(response.hasValidFingerprint(in: bytes))
        let value = try #require(response.attribute(STUNMessage.AttributeType.xorMappedAddress))
        let mapped = XORMappedAddress.decode(value, transactionID: response.transactionID)
        #expect(mapped?.ipv4 == 0xC000_0201 && mapped?.port == 32853)
        #expect(a.lastValidCheckMs == 1000 && a.nominated == "192.0.2.1:32853")
    }

    @Test func checksWithAWrongUsernamePasswordOrFingerprintAreIgnored() {
        var a = agent()
        let mapped: ([UInt8]) -> [UInt8] = { _ in [] }
        #expect(a.handle(Self.check(username: "evtj:other"), from: "x", nowMs: 1, mapped: mapped) == .ignore)
        #expect(a.handle(Self.check(password: "guessed"), from: "x", nowMs: 1, mapped: mapped) == .ignore)
        var bent = Self.check()
        bent[bent.count - 1] ^= 1
        #expect(a.handle(bent, from: "x", nowMs: 1, mapped: mapped) == .ignore)
        #expect(a.handle([0, 1, 0, 0], from: "x", nowMs: 1, mapped: mapped) == .ignore)
        #expect(a.refused == 4 && a.nominated == nil && a.lastValidCheckMs == 0)
    }

    @Test func useCandidateMovesTheMediaAddressAndConsentLapsesAfterThirtySeconds() {
        var a = agent()
        let mapped: ([UInt8]) -> [UInt8] = { _ in [] }
        _ = a.handle(Self.check(nominate: true), from: "wifi", nowMs: 0, mapped: mapped)
        _ = a.handle(Self.check(id: 2), from: "cell", nowMs: 5_000, mapped: mapped)
        #expect(a.nominated == "wifi")  // a check without USE-CANDIDATE does not move the media
        _ = a.handle(Self.check(nominate: true, id: 3), from: "cell", nowMs: 6_000, mapped: mapped)
        #expect(a.nominated == "cell")
        #expect(!a.consentExpired(nowMs: 36_000))
        #expect(a.consentExpired(nowMs: 36_001))
    }
}
