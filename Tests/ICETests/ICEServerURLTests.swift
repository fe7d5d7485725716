import Foundation
import Testing
@testable import ICE

@Suite struct ICEServerURLTests {
    @Test func turnAndStunURIsParseWithTheirDefaultPorts() throws {
        let udp = try #require(ICEServerURL("turn:turn.example.com:3478?transport=udp"))
        #expect(udp.scheme == .turn && udp.host == "turn.example.com" && udp.port == 3478 && udp.transport == "udp")
        let tls = try #require(ICEServerURL("turns:turn.example.com:443?transport=tcp"))
        #expect(tls.scheme == .turns && tls.port == 443 && tls.transport == "tcp" && tls.isTURN)
        #expect(ICEServerURL("turns:relay.example.org")?.port == 5349)
        #expect(ICEServerURL("stun:stun.example.com")?.port == 3478)
        let v6 = try #require(ICEServerURL("turn:[2001:db8::7]:3478"))
        #expect(v6.host == "2001:db8::7" && v6.port == 3478 && v6.text == "turn:[2001:db8::7]:3478")
    }

    @Test func malformedURIsAreRefused() {
        for text in [
            "", "turn:", "http://turn.example.com", "turn:host:0", "turn:host:65536", "turn:host:34x8",
            "turn:host?transport=sctp", "stun:host?transport=udp", "turn:ho st", "turn:[2001:db8::7", "turn:[zz]:1",
            "turn:host:3478?transport=udp&x=1", "turn:[::1]x",
        ] {
            #expect(ICEServerURL(text) == nil, "\(text)")
        }
    }

    /// The TURN REST scheme coturn checks: the vector computed independently (Python's hmac and base64).
    @Test func turnCredentialsAreTheExpiryAndUserSignedWithHMACSHA1() {
        let credentials = TURNCredentials(secret: "north-secret-0123", userId: "ann", expiresAt: 1_795_920_000)
        #expect(credentials.username == "1795920000:ann")
        #expect(credentials.password == "Fd9W+gHUTWgRvDKYbWDyHzrQUrE=")
    }
}
