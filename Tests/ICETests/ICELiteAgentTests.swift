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

    static let remotePassword = "Qe8Rj1s9Zr0cA5mVtK2wLp7d"

    /// The peer's answer to one of Cohost's checks, signed with the peer's password.
    static func answer(to request: [UInt8], password: String = remotePassword) throws -> [UInt8] {
        let message = try STUNMessage(bytes: request)
        return STUNMessage(
            method: STUNMessage.bindingMethod, messageClass: .success, transactionID: message.transactionID,
            attributes: [.init(type: STUNMessage.AttributeType.xorMappedAddress, value: [0, 1, 0, 0, 0, 0, 0, 0])]
        ).serialized(integrityKey: Array(password.utf8), fingerprint: true)
    }

    @Test func cohostChecksTheNominatedAddressEveryFourToSixSecondsSignedWithThePeersPassword() throws {
        var a = ICELiteAgent<String>(
            localUfrag: Self.local.ufrag, localPassword: Self.local.password, remoteUfrag: "h6vY",
            remotePassword: Self.remotePassword, nowMs: 0)
        let mapped: ([UInt8]) -> [UInt8] = { _ in [] }
        // Nothing to check before an address is nominated.
        #expect(a.consentCheck(nowMs: 0) == nil)
        _ = a.handle(Self.check(nominate: true), from: "wifi", nowMs: 100, mapped: mapped)
        let due = a.consentCheck(nowMs: 200) { $0.upperBound == 255 ? 7 : 5_000 }
        let first = try #require(due)
        #expect(first.to == "wifi")
        let request = try STUNMessage(bytes: first.bytes)
        #expect(request.messageClass == .request && request.username == "h6vY:evtj")
        #expect(request.transactionID == Array(repeating: 7, count: 12))
        #expect(request.hasValidIntegrity(in: first.bytes, key: Array(Self.remotePassword.utf8)))
        #expect(request.hasValidFingerprint(in: first.bytes))
        #expect(request.attribute(STUNMessage.AttributeType.iceControlled)?.count == 8)
        #expect(request.attribute(STUNMessage.AttributeType.priority)?.count == 4)
        // The next one when the drawn interval has passed, not before.
        #expect(a.consentCheck(nowMs: 5_199) == nil)
        #expect(a.consentCheck(nowMs: 5_200) != nil)
        #expect(a.consentChecksSent == 2)
    }

    @Test func onlyAValidAnswerFromTheCheckedAddressRenewsConsentNotTheirOwnChecks() throws {
        var a = ICELiteAgent<String>(
            localUfrag: Self.local.ufrag, localPassword: Self.local.password, remoteUfrag: "h6vY",
            remotePassword: Self.remotePassword, nowMs: 0)
        let mapped: ([UInt8]) -> [UInt8] = { _ in [] }
        _ = a.handle(Self.check(nominate: true), from: "wifi", nowMs: 0, mapped: mapped)
        let sent = a.consentCheck(nowMs: 1_000)
        let check = try #require(sent)
        let answer = try Self.answer(to: check.bytes)
        // From elsewhere, under the wrong password, or to no check in flight: nothing.
        #expect(a.handle(answer, from: "victim", nowMs: 2_000, mapped: mapped) == .ignore)
        #expect(
            a.handle(
                try Self.answer(to: check.bytes, password: "wrong-password-0123456"), from: "wifi", nowMs: 2_000,
                mapped: mapped) == .ignore)
        #expect(a.lastConsentMs == 0)
        #expect(a.handle(answer, from: "wifi", nowMs: 2_000, mapped: mapped) == .consented)
        #expect(a.lastConsentMs == 2_000 && a.consentAnswers == 1)
        // The same answer again is no longer in flight.
        #expect(a.handle(answer, from: "wifi", nowMs: 3_000, mapped: mapped) == .ignore)
        // The peer's own checks (one could come with a forged source) keep coming, but no answer does: consent lapses
        // 30 s after the last answer.
        for t in stride(from: Int64(5_000), through: 40_000, by: 5_000) {
            _ = a.handle(Self.check(id: UInt8(t / 1_000)), from: "wifi", nowMs: t, mapped: mapped)
        }
        #expect(!a.consentExpired(nowMs: 32_000))
        #expect(a.consentExpired(nowMs: 32_001))
    }
}
