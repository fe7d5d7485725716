import DTLS
import Foundation
import Hummingbird
import Logging
import Prometheus
import Rooms
import Testing

@testable import Server

/// WHIP (RFC 9725) and cross-origin access, in-process with a real RoomManager that has a DTLS identity.
@Suite(.serialized) struct WHIPAndCORSTests {
    static let keys = APIKeys(["k1": "s1"])
    static let context = try! DTLSContext(certificate: DTLSCertificate.generate())
    static var webRTCSettings: RoomSettings {
        var settings = RoomSettings(publicIP: "192.0.2.7", rtpPort: 40000)
        settings.webRTC = WebRTCSettings(context: context, addresses: ["192.0.2.7"])
        return settings
    }

    /// A browser-like sendrecv audio offer.
    static let offer = """
        v=0\r
        o=- 5 2 IN IP4 127.0.0.1\r
        s=-\r
        t=0 0\r
        a=group:BUNDLE 0\r
        m=audio 9 UDP/TLS/RTP/SAVPF 111\r
        c=IN IP4 0.0.0.0\r
        a=ice-ufrag:Zq9u\r
        a=ice-pwd:yTbCd1f0aLq5kXr8Zz0Vw3Nn\r
        a=fingerprint:sha-256 7D:64:9F:2C:0A:4E:C2:96:2B:6E:1F:21:7B:96:95:A3:05:C6:63:1D:7E:2F:63:FD:A6:51:5A:3E:2B:92:E1:4D\r
        a=setup:actpass\r
        a=mid:0\r
        a=sendrecv\r
        a=rtcp-mux\r
        a=rtpmap:111 opus/48000/2\r
        a=ssrc:777 cname:x\r

        """

    @Test func aWHIPPostJoinsTheTokensUserAndItsLocationDeleteLeaves() async throws {
        try await withApp(settings: Self.webRTCSettings) { client, manager in
            let ann = token(room: "show", user: "ann")
            var location = ""
            try await client.execute(
                uri: "/whip/show", method: .post,
                headers: [.authorization: "Bearer \(ann)", .contentType: "application/sdp"],
                body: ByteBuffer(string: Self.offer)
            ) {
                #expect($0.status == .created)
                #expect($0.headers[.contentType] == "application/sdp")
                location = $0.headers[.location] ?? ""
                let answer = String(buffer: $0.body)
                #expect(answer.contains("a=ice-lite\r\n") && answer.contains("a=setup:passive\r\n"))
                #expect(answer.contains("a=fingerprint:\(Self.context.certificate.fingerprintAttribute)\r\n"))
            }
            #expect(location == "/whip/show/ann")
            #expect(manager.room("show")?.participantCount == 1)
            // Another participant may not end it.
            try await client.execute(
                uri: location, method: .delete, headers: [.authorization: "Bearer \(token(room: "show", user: "ben"))"]
            ) { #expect($0.status == .forbidden) }
            try await client.execute(uri: location, method: .delete, headers: [.authorization: "Bearer \(ann)"]) {
                #expect($0.status == .ok)
            }
            #expect(manager.room("show")?.participantCount == 0)
            try await client.execute(uri: location, method: .delete, headers: [.authorization: "Bearer \(ann)"]) {
                #expect($0.status == .notFound)
            }
        }
    }

    @Test func whipRefusesAnOfferWithoutItsContentTypeOrToken() async throws {
        try await withApp(settings: Self.webRTCSettings) { client, _ in
            try await client.execute(uri: "/whip/show", method: .post, body: ByteBuffer(string: Self.offer)) {
                #expect($0.status == .unauthorized)
            }
            try await client.execute(
                uri: "/whip/show", method: .post,
                headers: [.authorization: "Bearer \(token(room: "show", user: "ann"))", .contentType: "text/plain"],
                body: ByteBuffer(string: Self.offer)
            ) { #expect($0.status == .unsupportedMediaType) }
        }
    }

    @Test func patchTrickleIsAcceptedAndNewCredentialsRestartICEWithANewETag() async throws {
        try await withApp(settings: Self.webRTCSettings) { client, manager in
            let ann = token(room: "show", user: "ann")
            var etag = ""
            var ufrag = ""
            try await client.execute(
                uri: "/whip/show", method: .post,
                headers: [.authorization: "Bearer \(ann)", .contentType: "application/sdp"],
                body: ByteBuffer(string: Self.offer)
            ) {
                etag = $0.headers[.eTag] ?? ""
                let answer = String(buffer: $0.body)
                ufrag = String(
                    answer.split(separator: "\r\n").first { $0.hasPrefix("a=ice-ufrag:") }?.dropFirst(12) ?? "")
            }
            #expect(etag == "\"\(ufrag)\"" && ufrag.count == 8)
            let sdpfrag: HTTPFields = [
                .authorization: "Bearer \(ann)", .contentType: "application/trickle-ice-sdpfrag", .ifMatch: etag,
            ]
            // Trickled candidates: nothing to do for an ICE-lite server.
            try await client.execute(
                uri: "/whip/show/ann", method: .patch, headers: sdpfrag,
                body: ByteBuffer(
                    string:
                        "a=ice-ufrag:Zq9u\r\na=ice-pwd:yTbCd1f0aLq5kXr8Zz0Vw3Nn\r\na=mid:0\r\na=candidate:1 1 udp 2130706431 127.0.0.1 5000 typ host\r\n"
                )
            ) { #expect($0.status == .noContent) }
            var restart = sdpfrag
            restart[.ifMatch] = "*"
            try await client.execute(
                uri: "/whip/show/ann", method: .patch, headers: restart,
                body: ByteBuffer(string: "a=ice-ufrag:N3wU\r\na=ice-pwd:n3wPasswordOfTheBrowser22\r\n")
            ) {
                #expect($0.status == .ok)
                #expect($0.headers[.contentType] == "application/trickle-ice-sdpfrag")
                let fragment = String(buffer: $0.body)
                let fresh = manager.iceUfrag(room: "show", userId: "ann") ?? ""
                #expect(fresh != ufrag && $0.headers[.eTag] == "\"\(fresh)\"")
                #expect(fragment.hasPrefix("a=ice-ufrag:\(fresh)\r\na=ice-pwd:"))
                #expect(
                    fragment.hasSuffix(
                        "a=candidate:1 1 udp 2130706431 192.0.2.7 40000 typ host\r\na=end-of-candidates\r\n"))
            }
            // The old ETag is stale now.
            try await client.execute(
                uri: "/whip/show/ann", method: .patch, headers: sdpfrag,
                body: ByteBuffer(string: "a=end-of-candidates\r\n")
            ) {
                #expect($0.status == .preconditionFailed)
                #expect(String(buffer: $0.body).contains("etag_mismatch"))
            }
        }
    }

    @Test func patchRefusals() async throws {
        try await withApp(settings: Self.webRTCSettings) { client, _ in
            let ann = token(room: "show", user: "ann")
            try await client.execute(
                uri: "/whip/show", method: .post,
                headers: [.authorization: "Bearer \(ann)", .contentType: "application/sdp"],
                body: ByteBuffer(string: Self.offer)
            ) { #expect($0.status == .created) }
            let body = ByteBuffer(string: "a=end-of-candidates\r\n")
            try await client.execute(uri: "/whip/show/ann", method: .patch, body: body) {
                #expect($0.status == .unauthorized)
            }
            try await client.execute(
                uri: "/whip/show/ann", method: .patch,
                headers: [.authorization: "Bearer \(ann)", .contentType: "application/trickle-ice-sdpfrag"], body: body
            ) { #expect($0.status == .preconditionRequired) }
            try await client.execute(
                uri: "/whip/show/ann", method: .patch,
                headers: [.authorization: "Bearer \(ann)", .contentType: "text/plain", .ifMatch: "*"], body: body
            ) { #expect($0.status == .unsupportedMediaType) }
            try await client.execute(
                uri: "/whip/show/ann", method: .patch,
                headers: [
                    .authorization: "Bearer \(token(room: "show", user: "ben"))",
                    .contentType: "application/trickle-ice-sdpfrag", .ifMatch: "*",
                ], body: body
            ) { #expect($0.status == .forbidden) }
            try await client.execute(
                uri: "/whip/show/ann", method: .patch,
                headers: [
                    .authorization: "Bearer \(ann)", .contentType: "application/trickle-ice-sdpfrag", .ifMatch: "*",
                ], body: ByteBuffer(string: "a=ice-ufrag:N3wU\r\na=ice-pwd:short\r\n")
            ) { #expect($0.status == .badRequest) }
        }
    }

    @Test func anAllowedOriginGetsItsPreflightAndItsHeadersEvenOnErrors() async throws {
        try await withApp(settings: Self.webRTCSettings, cors: ["https://show.example"]) { client, _ in
            try await client.execute(
                uri: "/v1/rooms/show/participants", method: .options,
                headers: [.origin: "https://show.example", .accessControlRequestMethod: "POST"]
            ) {
                #expect($0.status == .noContent)
                #expect($0.headers[.accessControlAllowOrigin] == "https://show.example")
                #expect($0.headers[.accessControlAllowMethods] == CORSPolicy<BasicRequestContext>.allowedMethods)
                #expect($0.headers[.accessControlAllowHeaders] == "Authorization, Content-Type, If-Match")
                #expect($0.headers[.vary] == "Origin")
            }
            try await client.execute(
                uri: "/whip/show", method: .post, headers: [.origin: "https://show.example"],
                body: ByteBuffer(string: Self.offer)
            ) {
                #expect($0.status == .unauthorized)
                #expect($0.headers[.accessControlAllowOrigin] == "https://show.example")
                #expect($0.headers[.accessControlExposeHeaders] == "Location, ETag, Link")
            }
        }
    }

    @Test func anotherOriginGetsNoCORSHeaders() async throws {
        try await withApp(settings: Self.webRTCSettings, cors: ["https://show.example"]) { client, _ in
            try await client.execute(
                uri: "/v1/rooms/show/participants", method: .options,
                headers: [.origin: "https://evil.example", .accessControlRequestMethod: "POST"]
            ) {
                #expect($0.headers[.accessControlAllowOrigin] == nil)
                #expect($0.status != .noContent)
            }
        }
    }

    @Test func aWildcardAllowsAnyOriginWithoutVary() async throws {
        try await withApp(settings: Self.webRTCSettings, cors: ["*"]) { client, _ in
            try await client.execute(uri: "/healthz", method: .get, headers: [.origin: "https://anyone.example"]) {
                #expect($0.headers[.accessControlAllowOrigin] == "*")
                #expect($0.headers[.vary] == nil)
            }
        }
    }
}
