import HTTPTypes
import Testing

@testable import Server

/// The signature nodes put on what they forward: its exact bytes, and every way a copy of it stops holding.
@Suite struct ForwardSignatureTests {
    static let secret = "cluster-secret-0123456789abcdef0123"
    static let body = Array(#"{"a":1}"#.utf8)
    static let target = "/v1/rooms/far/participants?x=1"

    static func fields(_ signed: [(HTTPField.Name, String)]) -> HTTPFields {
        var fields = HTTPFields()
        for (name, value) in signed { fields[name] = value }
        return fields
    }

    @Test func theMACCoversMethodTargetTimeNodeAndBody() {
        // Python: hmac.new(secret, b"POST\n<target>\n1764390000\nn1\n" + body, hashlib.sha256).hexdigest()
        #expect(
            ForwardSignature.code(
                secret: Self.secret, method: "POST", target: Self.target, at: 1_764_390_000, node: "n1", body: Self.body
            )
                == "98a1cd51bfd50b037ac9388ee388b7a0c5f3a6bb5cace8d0e33d67537ebd225f")
    }

    @Test func aCopyHoldsOnlyForTheSameCallWithinThirtySeconds() {
        let now: Int64 = 1_764_390_000
        let signed = Self.fields(
            ForwardSignature.fields(
                secret: Self.secret, method: "POST", target: Self.target, node: "n1", body: Self.body, now: now))
        func valid(
            _ fields: HTTPFields, secret: String = Self.secret, method: String = "POST", target: String = Self.target,
            body: [UInt8] = Self.body, at: Int64 = now
        ) -> Bool {
            ForwardSignature.isValid(fields, secret: secret, method: method, target: target, body: body, now: at)
        }
        #expect(valid(signed) && valid(signed, at: now + 30) && valid(signed, at: now - 30))
        #expect(!valid(signed, at: now + 31) && !valid(signed, at: now - 31))
        #expect(!valid(signed, secret: "another-secret-0123456789abcdef0123"))
        #expect(!valid(signed, method: "DELETE") && !valid(signed, target: "/v1/rooms/near/participants?x=1"))
        #expect(!valid(signed, body: Array(#"{"a":2}"#.utf8)))
        var otherNode = signed
        otherNode[ForwardSignature.node] = "n9"
        #expect(!valid(otherNode))
        var bare = signed
        bare[ForwardSignature.mac] = nil
        #expect(!valid(bare))
        #expect(ForwardSignature.stripped(signed).isEmpty)
    }
}
