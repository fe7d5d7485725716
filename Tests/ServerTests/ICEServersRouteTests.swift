import Foundation
import HTTPTypes
import Hummingbird
import Rooms
import TestSupport
import Testing
import ICE

@testable import Server

/// The STUN and TURN servers handed to clients, TURN credentials minted per caller: the JSON of
/// `GET /v1/rooms/{room}/ice-servers`, and the `Link` headers of `OPTIONS /whip/{room}` and of a WHIP answer.
@Suite(.serialized) struct ICEServersRouteTests {
    static let secret = "turn-secret-0123456789"
    static var settings: RoomSettings {
        var settings = WHIPAndCORSTests.webRTCSettings
        settings.iceServers = ICEServers(
            turnURLs: ["turn:turn.example.com:3478?transport=udp", "turns:turn.example.com:443?transport=tcp"],
            turnSecret: secret, stunURLs: ["stun:stun.example.com:3478"])
        return settings
    }
    static let exp: Int64 = Int64(Date().timeIntervalSince1970) + 600

    @Test func aParticipantGetsTheServersWithCredentialsEndingWithItsToken() async throws {
        try await withApp(settings: Self.settings) { client, _ in
            let ann = token(room: "show", user: "ann", exp: Self.exp)
            try await client.execute(
                uri: "/v1/rooms/show/ice-servers", method: .get, headers: [.authorization: "Bearer \(ann)"]
            ) {
                #expect($0.status == .ok)
                #expect($0.headers[.cacheControl] == "no-store")
                let username = "\(Self.exp):ann"
                let credential = TURNCredentials(secret: Self.secret, userId: "ann", expiresAt: Self.exp).password
                #expect(
                    String(buffer: $0.body)
                        == "{\"expiresAt\":\(Self.exp),\"iceServers\":[{\"credential\":\"\(credential)\","
                        + "\"urls\":[\"turn:turn.example.com:3478?transport=udp\","
                        + "\"turns:turn.example.com:443?transport=tcp\"],\"username\":\"\(username)\"},"
                        + "{\"urls\":[\"stun:stun.example.com:3478\"]}]}")
            }
        }
    }

    @Test func aViewerTokenMayAskAnotherRoomsMayNot() async throws {
        try await withApp(settings: Self.settings) { client, _ in
            let viewer = TestToken.mint(key: "k1", secret: "s1", room: "show", user: "v1", viewer: true)
            try await client.execute(
                uri: "/v1/rooms/show/ice-servers", method: .get, headers: [.authorization: "Bearer \(viewer)"]
            ) { #expect($0.status == .ok) }
            let other = token(room: "other", user: "ann")
            try await client.execute(
                uri: "/v1/rooms/show/ice-servers", method: .get, headers: [.authorization: "Bearer \(other)"]
            ) { #expect($0.status == .forbidden) }
            try await client.execute(uri: "/v1/rooms/show/ice-servers", method: .get) {
                #expect($0.status == .unauthorized)
                #expect(errorCode($0) == "token_missing")
            }
        }
    }

    @Test func aServerWithoutServersAnswersAnEmptyList() async throws {
        try await withApp(settings: WHIPAndCORSTests.webRTCSettings) { client, _ in
            let ann = token(room: "show", user: "ann", exp: Self.exp)
            try await client.execute(
                uri: "/v1/rooms/show/ice-servers", method: .get, headers: [.authorization: "Bearer \(ann)"]
            ) {
                #expect(String(buffer: $0.body) == "{\"expiresAt\":\(Self.exp),\"iceServers\":[]}")
            }
        }
    }

    @Test func whipOptionsWithATokenAndTheAnswerCarryOneLinkPerServer() async throws {
        try await withApp(settings: Self.settings) { client, _ in
            let ann = token(room: "show", user: "ann", exp: Self.exp)
            let credential = TURNCredentials(secret: Self.secret, userId: "ann", expiresAt: Self.exp).password
            let turn =
                "rel=\"ice-server\"; username=\"\(Self.exp):ann\"; credential=\"\(credential)\"; "
                + "credential-type=\"password\""
            let expected = [
                "<turn:turn.example.com:3478?transport=udp>; \(turn)",
                "<turns:turn.example.com:443?transport=tcp>; \(turn)",
                "<stun:stun.example.com:3478>; rel=\"ice-server\"",
            ]
            try await client.execute(
                uri: "/whip/show", method: .options, headers: [.authorization: "Bearer \(ann)"]
            ) {
                #expect($0.status == .noContent)
                #expect($0.headers[values: .link] == expected)
                #expect($0.headers[.allow] == "POST, OPTIONS")
            }
            try await client.execute(uri: "/whip/show", method: .options) {
                #expect($0.status == .noContent)
                #expect($0.headers[values: .link].isEmpty, "no credentials without a token")
            }
            let viewer = TestToken.mint(key: "k1", secret: "s1", room: "show", user: "v1", viewer: true)
            try await client.execute(
                uri: "/whip/show", method: .options, headers: [.authorization: "Bearer \(viewer)"]
            ) { #expect($0.status == .forbidden) }
            try await client.execute(
                uri: "/whip/show", method: .post,
                headers: [.authorization: "Bearer \(ann)", .contentType: "application/sdp"],
                body: ByteBuffer(string: WHIPAndCORSTests.offer)
            ) {
                #expect($0.status == .created)
                #expect($0.headers[values: .link] == expected)
            }
        }
    }
}
