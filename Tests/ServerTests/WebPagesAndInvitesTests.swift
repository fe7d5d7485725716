import Foundation
import Hummingbird
import HTTPTypes
import Logging
import Prometheus
import Rooms
import Testing
import TestSupport

@testable import Server

/// The console's files and the invites that make join links, in-process.
@Suite(.serialized) struct WebPagesAndInvitesTests {
    static let keys = APIKeys(["k1": "s1"])

    /// A web directory with a page, a script and a file that must not be served.
    static let web: URL = {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("cohost-web-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try! Data("<!doctype html><title>console</title>".utf8).write(to: dir.appendingPathComponent("console.html"))
        try! Data("<!doctype html><title>join</title>".utf8).write(to: dir.appendingPathComponent("join.html"))
        try! Data("export const x = 1;\n".utf8).write(to: dir.appendingPathComponent("console.js"))
        try! Data("secret".utf8).write(to: dir.appendingPathComponent("notes.txt"))
        return dir
    }()

    @Test func theConsoleAndTheJoinPageAreServedWithAStrictPolicy() async throws {
        try await withApp(webDirectory: Self.web.path) { client, _ in
            for (path, title) in [("/", "console"), ("/rooms/show", "console"), ("/join/show", "join")] {
                try await client.execute(uri: path, method: .get) {
                    #expect($0.status == .ok)
                    #expect($0.headers[.contentType] == "text/html; charset=utf-8")
                    #expect(String(buffer: $0.body).contains("<title>\(title)</title>"))
                    let policy = $0.headers[HTTPField.Name("Content-Security-Policy")!] ?? ""
                    #expect(policy.hasPrefix("default-src 'self'; script-src 'self'; style-src 'self';"))
                    #expect(policy.contains("connect-src 'self'"))
                    #expect(!policy.contains("unsafe"))
                }
            }
        }
    }

    @Test func connectionsMayGoToThisServerOnly() {
        #expect(
            WebPages.contentSecurityPolicy(host: "show.example:443")
                == "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
                + "media-src 'self' blob:; connect-src 'self' ws://show.example:443 wss://show.example:443; "
                + "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
    }

    @Test func scriptsAreServedByTypeAndNothingElseIs() async throws {
        try await withApp(webDirectory: Self.web.path) { client, _ in
            try await client.execute(uri: "/web/console.js", method: .get) {
                #expect($0.status == .ok && $0.headers[.contentType] == "text/javascript; charset=utf-8")
                #expect($0.headers[HTTPField.Name("X-Content-Type-Options")!] == "nosniff")
            }
            for path in ["/web/notes.txt", "/web/missing.js", "/web/..%2Fconsole.html", "/web/.hidden.js"] {
                try await client.execute(uri: path, method: .get) {
                    #expect($0.status == .notFound, "\(path)")
                    // The answer names the file asked for, never where the server keeps its files.
                    let body = String(buffer: $0.body)
                    #expect(!body.contains(Self.web.path) && !body.contains("cohost-web-"), "\(body)")
                }
            }
            for path in ["/join/%C2%84", "/rooms/a%20b"] {
                try await client.execute(uri: path, method: .get) { #expect($0.status == .badRequest, "\(path)") }
            }
        }
    }

    /// An admin token for every room, after it created the audio-only room "show".
    static func createShow(_ client: RouterClient) async throws -> String {
        let admin = token(room: "*", user: "producer", admin: true)
        try await client.execute(
            uri: "/v1/rooms", method: .post, headers: [.authorization: "Bearer \(admin)"],
            body: ByteBuffer(string: #"{"name":"show","audioOnly":true}"#)
        ) { #expect($0.status == .created) }
        return admin
    }

    @Test func anInviteIsAParticipantTokenForThatUserAndALinkToTheJoinPage() async throws {
        try await withApp(webDirectory: Self.web.path) { client, manager in
            let admin = try await Self.createShow(client)
            try await client.execute(
                uri: "/v1/rooms/show/invites", method: .post, headers: [.authorization: "Bearer \(admin)"],
                body: ByteBuffer(string: #"{"userId":"guest1","ttlSeconds":600}"#)
            ) {
                #expect($0.status == .created)
                struct Body: Decodable {
                    var userId: String
                    var token: String
                    var link: String
                    var expiresAt: String
                }
                let invite = try JSONDecoder().decode(Body.self, from: Data(buffer: $0.body))
                #expect(invite.userId == "guest1" && invite.link == "/join/show#token=\(invite.token)")
                let claims = try RoomToken.verify(
                    invite.token, keys: Self.keys, now: Int64(Date().timeIntervalSince1970))
                #expect(claims.sub == "guest1" && claims.room == "show" && !claims.admin && claims.iss == "k1")
                #expect(claims.exp - (claims.iat ?? 0) == 600)
            }
            _ = manager
        }
    }

    @Test func invitesAreForAdminsOfExistingRoomsWithValidUsersAndLifetimes() async throws {
        try await withApp(webDirectory: Self.web.path) { client, _ in
            let admin = try await Self.createShow(client)
            let cases: [(String, String, HTTPResponse.Status)] = [
                (token(room: "show", user: "ann"), #"{"userId":"x"}"#, .forbidden),
                (admin, #"{"userId":"bad user"}"#, .badRequest),
                (admin, #"{"userId":"x","ttlSeconds":10}"#, .badRequest),
                (admin, #"{"userId":"x","ttlSeconds":100000000}"#, .badRequest),
            ]
            for (caller, body, status) in cases {
                try await client.execute(
                    uri: "/v1/rooms/show/invites", method: .post, headers: [.authorization: "Bearer \(caller)"],
                    body: ByteBuffer(string: body)
                ) { #expect($0.status == status, "\(body)") }
            }
            try await client.execute(
                uri: "/v1/rooms/nowhere/invites", method: .post, headers: [.authorization: "Bearer \(admin)"],
                body: ByteBuffer(string: #"{"userId":"x"}"#)
            ) { #expect($0.status == .notFound) }
        }
    }

    @Test func aSingleUseInviteJoinsOnceAndARevokedOneOpensNothing() async throws {
        try await withApp(webDirectory: Self.web.path) { client, _ in
            let admin = try await Self.createShow(client)
            struct Invite: Decodable {
                var id: String
                var token: String?
                var usesLeft: Int?
            }
            func invite(_ body: String) async throws -> Invite {
                var made: Invite?
                try await client.execute(
                    uri: "/v1/rooms/show/invites", method: .post, headers: [.authorization: "Bearer \(admin)"],
                    body: ByteBuffer(string: body)
                ) {
                    #expect($0.status == .created)
                    made = try JSONDecoder().decode(Invite.self, from: Data(buffer: $0.body))
                    #expect($0.headers[.location] == "/v1/rooms/show/invites/\(made?.id ?? "")")
                }
                return try #require(made)
            }
            func join(_ token: String, ssrc: UInt32) async throws -> (HTTPResponse.Status, String?) {
                var result: (HTTPResponse.Status, String?) = (.ok, nil)
                try await client.execute(
                    uri: "/v1/rooms/show/participants", method: .post,
                    headers: [.authorization: "Bearer \(token)", .contentType: "application/sdp"],
                    body: ByteBuffer(string: TestOffer.plain(audio: ssrc, video: nil))
                ) { result = ($0.status, errorCode($0)) }
                return result
            }
            let once = try await invite(#"{"userId":"ann","uses":1}"#)
            #expect(once.usesLeft == 1)
            let onceToken = try #require(once.token)
            #expect(try await join(onceToken, ssrc: 5101).0 == .created)
            #expect(try await join(onceToken, ssrc: 5102) == (.forbidden, "invite_used"))
            // An invite without a count joins until it is revoked; then neither a join nor the events open.
            let open = try await invite(#"{"userId":"ben"}"#)
            let openToken = try #require(open.token)
            #expect(try await join(openToken, ssrc: 5103).0 == .created)
            try await client.execute(
                uri: "/v1/rooms/show/invites", method: .get, headers: [.authorization: "Bearer \(admin)"]
            ) {
                struct List: Decodable { var invites: [Invite] }
                let list = try JSONDecoder().decode(List.self, from: Data(buffer: $0.body)).invites
                #expect(Set(list.map(\.id)) == [once.id, open.id] && list.allSatisfy { $0.token == nil })
                #expect(list.first { $0.id == once.id }?.usesLeft == 0)
            }
            try await client.execute(
                uri: "/v1/rooms/show/invites/\(open.id)", method: .delete, headers: [.authorization: "Bearer \(admin)"]
            ) { #expect($0.status == .noContent) }
            #expect(try await join(openToken, ssrc: 5104) == (.forbidden, "invite_revoked"))
            try await client.execute(
                uri: "/v1/rooms/show/events", method: .get, headers: [.authorization: "Bearer \(openToken)"]
            ) { #expect(errorCode($0) == "invite_revoked") }
            try await client.execute(
                uri: "/v1/rooms/show/invites/\(open.id)", method: .delete, headers: [.authorization: "Bearer \(admin)"]
            ) { #expect($0.status == .notFound) }
            // Only an admin revokes; a count outside 1...1000 is refused; a token naming an invite never made opens
            // nothing.
            try await client.execute(
                uri: "/v1/rooms/show/invites/\(once.id)", method: .delete,
                headers: [.authorization: "Bearer \(onceToken)"]
            ) { #expect($0.status == .forbidden) }
            for uses in ["0", "1001", "-1"] {
                try await client.execute(
                    uri: "/v1/rooms/show/invites", method: .post, headers: [.authorization: "Bearer \(admin)"],
                    body: ByteBuffer(string: #"{"userId":"x","uses":\#(uses)}"#)
                ) { #expect(errorCode($0) == "invalid_uses", "\(uses)") }
            }
            let now = Int64(Date().timeIntervalSince1970)
            let made = RoomToken.mint(
                TokenClaims(iss: "k1", sub: "cat", room: "show", exp: now + 600, iat: now, inv: "0123abcd"),
                secret: "s1")
            #expect(try await join(made, ssrc: 5105) == (.forbidden, "invite_revoked"))
        }
    }

    @Test func theEventsSocketTakesItsTokenAsASubprotocolAndAnswersWithCohostEvents() async throws {
        let manager = RoomManager(settings: RoomSettings(), logger: Logger(label: "test"))
        defer { manager.shutdown() }
        _ = try manager.createRoom(RoomConfigRequest(name: "show"))
        func upgrade(_ protocols: String?) -> HTTPFields? {
            var request = HTTPRequest(method: .get, scheme: "http", authority: "h", path: "/v1/rooms/show/events")
            if let protocols { request.headerFields[.secWebSocketProtocol] = protocols }
            guard case .upgrade(let headers, _) = EventsSocket.shouldUpgrade(request, manager: manager, keys: Self.keys)
            else { return nil }
            return headers
        }
        let ann = token(room: "show", user: "ann")
        #expect(upgrade("cohost.events, cohost.token.\(ann)")?[.secWebSocketProtocol] == "cohost.events")
        // The token alone, without the subprotocol that says what it is, is not taken.
        #expect(upgrade("cohost.token.\(ann)") == nil)
        #expect(upgrade("cohost.events, cohost.token.not-a-token") == nil)
        #expect(upgrade(nil) == nil)
        // Each upgrade above that succeeded holds a socket slot until its handler runs; release it.
        EventsSocket.open.release(
            EventsSocket.holder(try RoomToken.verify(ann, keys: Self.keys, now: Int64(Date().timeIntervalSince1970))))
    }
}
