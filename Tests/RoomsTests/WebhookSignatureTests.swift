import Foundation
import Testing
@testable import Rooms

/// `X-Cohost-Signature`: golden values computed with Python's hmac/hashlib, not with this code.
@Suite struct WebhookSignatureTests {
    /// participant_joined of alice in standup at 2024-05-01T12:00:00Z, as the events WebSocket sends it.
    static let body =
        #"{"room":"standup","time":"2024-05-01T12:00:00.000Z","type":"participant_joined","userId":"alice"}"#
    static let golden = "sha256=94d108a9e6a997d8c19d94aec3e94dbd11f16d23df94437c7b1877dc8e0fca11"

    @Test func signatureOfAnEventBodyMatchesAnIndependentHMAC() {
        #expect(WebhookSignature.sign(Array(Self.body.utf8), secret: "s3cret") == Self.golden)
    }

    @Test func theSignedBodyIsExactlyTheEventJSON() {
        let json = RoomEvent.participantJoined(userId: "alice").json(
            room: "standup", time: Date(timeIntervalSince1970: 1_714_564_800))
        #expect(json == Self.body)
    }

    @Test func shortUnicodeAndEmptyInputsMatchIndependentHMACs() {
        #expect(
            WebhookSignature.sign(Array("body".utf8), secret: "secret")
                == "sha256=dc46983557fea127b43af721467eb9b3fde2338fe3e14f51952aa8478c13d355")
        #expect(
            WebhookSignature.sign([], secret: "")
                == "sha256=b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
        #expect(
            WebhookSignature.sign(Array("événement ✓".utf8), secret: "sécret")
                == "sha256=f9b1884c98d522b87e3a3c640346b32c0f92c6dfead6fbd1e343ec8e8db1a94a")
    }

    @Test func verificationAcceptsTheSignatureInEitherCaseAndRefusesAnyChange() {
        let body = Array(Self.body.utf8)
        #expect(WebhookSignature.isValid(Self.golden, body: body, secret: "s3cret"))
        #expect(
            WebhookSignature.isValid("sha256=" + Self.golden.dropFirst(7).uppercased(), body: body, secret: "s3cret"))
        #expect(!WebhookSignature.isValid(Self.golden, body: body, secret: "s3cres"))
        #expect(!WebhookSignature.isValid(Self.golden, body: body + [0x20], secret: "s3cret"))
        let flipped = String(Self.golden.dropLast()) + "0"
        #expect(!WebhookSignature.isValid(flipped, body: body, secret: "s3cret"))
        // no sha256=
        #expect(!WebhookSignature.isValid(String(Self.golden.dropFirst(7)), body: body, secret: "s3cret"))
        #expect(!WebhookSignature.isValid("sha256=zz", body: body, secret: "s3cret"))
        #expect(!WebhookSignature.isValid("sha256=" + String(repeating: "a", count: 63), body: body, secret: "s3cret"))
        #expect(!WebhookSignature.isValid("sha256=", body: body, secret: "s3cret"))
    }
}
