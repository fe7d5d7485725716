import Foundation
import Testing
import Hummingbird
import Logging
import Prometheus
import Rooms
@testable import Server
import TestSupport

/// Routes tested in-process: real RoomManager, no sockets.
@Suite(.serialized) struct RoutesTests {
    static let keys = APIKeys(["k1": "s1"])

    static let offer = TestOffer.plain(audio: 5001, direction: nil)

    @Test func tokenRefusalsHaveTheirOwnCodes() async throws {
        try await withApp { client, _ in
            try await client.execute(uri: "/v1/rooms/r1", method: .get) {
                #expect($0.status == .unauthorized)
                #expect(errorCode($0) == "token_missing")
            }
            try await client.execute(uri: "/v1/rooms/r1", method: .get, headers: [.authorization: "Bearer abc"]) {
                #expect($0.status == .unauthorized)
                #expect(errorCode($0) == "token_malformed")
            }
            let bad = token(room: "r1", user: "u", admin: true, secret: "wrong")
            try await client.execute(uri: "/v1/rooms/r1", method: .get, headers: [.authorization: "Bearer \(bad)"]) {
                #expect(errorCode($0) == "token_bad_signature")
            }
            let expired = token(room: "r1", user: "u", admin: true, exp: 1000)
            try await client.execute(uri: "/v1/rooms/r1", method: .get, headers: [.authorization: "Bearer \(expired)"])
            {
                #expect(errorCode($0) == "token_expired")
            }
            let otherRoom = token(room: "r2", user: "u", admin: true)
            try await client.execute(
                uri: "/v1/rooms/r1", method: .get, headers: [.authorization: "Bearer \(otherRoom)"]
            ) {
                #expect($0.status == .forbidden)
                #expect(errorCode($0) == "forbidden")
            }
            let notAdmin = token(room: "r1", user: "u")
            try await client.execute(uri: "/v1/rooms/r1", method: .get, headers: [.authorization: "Bearer \(notAdmin)"])
            {
                #expect($0.status == .forbidden)
            }
        }
    }

    @Test func createGetAndCloseARoom() async throws {
        try await withApp { client, manager in
            let admin = token(room: "*", user: "boss", admin: true)
            let body = #"{"name":"r1","audioOnly":true,"audio":{"bitrate":64,"channels":1}}"#
            try await client.execute(
                uri: "/v1/rooms", method: .post, headers: [.authorization: "Bearer \(admin)"],
                body: ByteBuffer(string: body)
            ) { response in
                #expect(response.status == .created)
                #expect(response.headers[.location] == "/v1/rooms/r1")
            }
            try await client.execute(
                uri: "/v1/rooms", method: .post, headers: [.authorization: "Bearer \(admin)"],
                body: ByteBuffer(string: body)
            ) { #expect(errorCode($0) == "room_exists") }
            try await client.execute(uri: "/v1/rooms/r1", method: .get, headers: [.authorization: "Bearer \(admin)"]) {
                response in
                #expect(response.status == .ok)
                let json = try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any]
                #expect(json?["audioOnly"] as? Bool == true)
                #expect(json?["video"] == nil)
            }
            try await client.execute(uri: "/v1/rooms/r1", method: .delete, headers: [.authorization: "Bearer \(admin)"])
            {
                #expect($0.status == .noContent)
            }
            #expect(manager.room("r1") == nil)
        }
    }

    @Test func malformedJSONAndLimitsAre400WithTheLimitNamed() async throws {
        try await withApp { client, _ in
            let admin = token(room: "*", user: "boss", admin: true)
            try await client.execute(
                uri: "/v1/rooms", method: .post, headers: [.authorization: "Bearer \(admin)"],
                body: ByteBuffer(string: "{not json")
            ) {
                #expect($0.status == .badRequest)
                #expect(errorCode($0) == "invalid_json")
            }
            try await client.execute(
                uri: "/v1/rooms", method: .post, headers: [.authorization: "Bearer \(admin)"],
                body: ByteBuffer(string: #"{"name":"r1","canvas":{"fps":500}}"#)
            ) {
                #expect(errorCode($0) == "limit_exceeded")
                #expect(String(buffer: $0.body).contains("canvas.fps must be within 1...60"))
            }
            // Room bodies may carry base64 PNGs, so their cap is larger than other JSON bodies' 64 KB.
            let huge = String(repeating: " ", count: RoomRoutes.maxRoomBody + 1)
            try await client.execute(
                uri: "/v1/rooms", method: .post, headers: [.authorization: "Bearer \(admin)"],
                body: ByteBuffer(string: huge)
            ) { #expect($0.status == .contentTooLarge) }
            try await client.execute(
                uri: "/v1/rooms/r1/layout", method: .put, headers: [.authorization: "Bearer \(admin)"],
                body: ByteBuffer(string: String(repeating: " ", count: 70_000))
            ) {
                #expect($0.status == .contentTooLarge)
                #expect(errorCode($0) == "body_too_large")
            }
        }
    }

    @Test func joinAnswersWithSDPAndImplicitlyCreatesTheRoom() async throws {
        try await withApp { client, manager in
            let alice = token(room: "talk", user: "alice")
            try await client.execute(
                uri: "/v1/rooms/talk/participants", method: .post,
                headers: [.authorization: "Bearer \(alice)", .contentType: "application/sdp"],
                body: ByteBuffer(string: Self.offer)
            ) { response in
                #expect(response.status == .created)
                #expect(response.headers[.location] == "/v1/rooms/talk/participants/alice")
                #expect(response.headers[.contentType] == "application/sdp")
                let answer = String(buffer: response.body)
                #expect(answer.contains("c=IN IP4 192.0.2.7\r\n"))
                #expect(answer.contains("m=audio 40000 RTP/AVP 111\r\n"))
            }
            #expect(manager.room("talk")?.participantCount == 1)

            // The same SSRC from someone else is a conflict.
            let bob = token(room: "talk", user: "bob")
            try await client.execute(
                uri: "/v1/rooms/talk/participants", method: .post,
                headers: [.authorization: "Bearer \(bob)", .contentType: "application/sdp"],
                body: ByteBuffer(string: Self.offer)
            ) {
                #expect($0.status == .conflict)
                #expect(errorCode($0) == "ssrc_conflict")
            }
            // Garbage SDP, and only an unknown codec.
            try await client.execute(
                uri: "/v1/rooms/talk/participants", method: .post,
                headers: [.authorization: "Bearer \(bob)", .contentType: "application/sdp"],
                body: ByteBuffer(string: "v=0\r\nm=garbage\r\n")
            ) {
                #expect($0.status == .badRequest)
                #expect(errorCode($0) == "invalid_sdp")
            }
            let g722 = Self.offer.replacingOccurrences(of: "opus/48000/2", with: "G722/8000").replacingOccurrences(
                of: "5001", with: "5002")
            try await client.execute(
                uri: "/v1/rooms/talk/participants", method: .post,
                headers: [.authorization: "Bearer \(bob)", .contentType: "application/sdp"],
                body: ByteBuffer(string: g722)
            ) {
                #expect($0.status == .unsupportedMediaType)
                #expect(errorCode($0) == "unsupported_media")
            }
        }
    }

    @Test func aParticipantMayLeaveButNotKickAndAKickedTokenCannotRejoin() async throws {
        try await withApp { client, manager in
            let iat = Int64(Date().timeIntervalSince1970) - 5
            for (user, ssrc) in [("alice", 1), ("bob", 2)] {
                let t = token(room: "talk", user: user, iat: iat)
                try await client.execute(
                    uri: "/v1/rooms/talk/participants", method: .post, headers: [.authorization: "Bearer \(t)"],
                    body: ByteBuffer(string: Self.offer.replacingOccurrences(of: "5001", with: "\(ssrc)"))
                ) {
                    #expect($0.status == .created)
                }
            }
            let alice = token(room: "talk", user: "alice", iat: iat)
            try await client.execute(
                uri: "/v1/rooms/talk/participants/bob", method: .delete, headers: [.authorization: "Bearer \(alice)"]
            ) {
                #expect($0.status == .forbidden)
            }
            let admin = token(room: "talk", user: "mod", admin: true)
            try await client.execute(
                uri: "/v1/rooms/talk/participants/bob", method: .delete, headers: [.authorization: "Bearer \(admin)"]
            ) {
                #expect($0.status == .noContent)
            }
            let bobAgain = token(room: "talk", user: "bob", iat: iat)
            try await client.execute(
                uri: "/v1/rooms/talk/participants", method: .post, headers: [.authorization: "Bearer \(bobAgain)"],
                body: ByteBuffer(string: Self.offer.replacingOccurrences(of: "5001", with: "3"))
            ) {
                #expect($0.status == .forbidden)
                #expect(errorCode($0) == "kicked")
            }
            // Nor listen to the room's events with it.
            try await client.execute(uri: "/v1/rooms/talk/events?token=\(bobAgain)", method: .get) {
                #expect($0.status == .forbidden)
                #expect(errorCode($0) == "kicked")
            }
            try await client.execute(
                uri: "/v1/rooms/talk/participants/alice", method: .delete, headers: [.authorization: "Bearer \(alice)"]
            ) {
                #expect($0.status == .noContent)
            }
            #expect(manager.room("talk")?.participantCount == 0)
        }
    }

    @Test func healthAndMetricsAnswer() async throws {
        try await withApp { client, _ in
            try await client.execute(uri: "/healthz", method: .get) { #expect($0.status == .ok) }
            try await client.execute(uri: "/metrics", method: .get) { #expect($0.status == .ok) }
        }
    }

    @Test func outputsTakeValidatedOptionsAndReportThemWithTheirStatus() async throws {
        try await withApp { client, manager in
            let admin = token(room: "*", user: "boss", admin: true)
            let auth: HTTPFields = [.authorization: "Bearer \(admin)"]
            try await client.execute(
                uri: "/v1/rooms", method: .post, headers: auth,
                body: ByteBuffer(
                    string: #"{"name":"out","audioOnly":true,"audio":{"bitrate":64},"statusIntervalMs":1000}"#)
            ) {
                #expect($0.status == .created)
            }
            try await client.execute(
                uri: "/v1/rooms/out/outputs", method: .post, headers: auth,
                body: ByteBuffer(string: #"{"url":"file:///tmp/x.flv","queueMs":20000}"#)
            ) { response in
                #expect(response.status == .badRequest)
                #expect(errorCode(response) == "invalid_output")
                #expect(String(buffer: response.body).contains("queueMs must be within 100...10000, got 20000"))
            }
            try await client.execute(
                uri: "/v1/rooms/out/outputs", method: .post, headers: auth,
                body: ByteBuffer(string: #"{"url":"udp://h:9000"}"#)
            ) { #expect(errorCode($0) == "invalid_output") }

            let events = try #require(manager.room("out")).events.subscribe()
            let path = NSTemporaryDirectory() + "cohost-routes-\(UUID().uuidString).flv"
            defer { try? FileManager.default.removeItem(atPath: path) }
            let body =
                #"{"url":"file://\#(path)","queueMs":3000,"maxRetries":3,"backoff":{"initialMaxMs":500,"maxMs":5000}}"#
            try await client.execute(
                uri: "/v1/rooms/out/outputs", method: .post, headers: auth, body: ByteBuffer(string: body)
            ) { response in
                #expect(response.status == .created)
                #expect(response.headers[.location] == "/v1/rooms/out/outputs/o1")
                let json = try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any]
                #expect(json?["id"] as? String == "o1" && json?["attempt"] as? Int == 0)
                #expect(json?["queueLimitMs"] as? Int == 3000 && json?["maxRetries"] as? Int == 3)
                #expect(json?["bitrate"] as? Int == 64)  // audio-only: the AAC encoder's target
            }
            // The first output_status comes one interval (1 s) after the room started.
            let status = try await Self.firstEvent(of: "output_status", in: events, timeout: 5)
            #expect(status?["output"] as? String == "o1" && status?["url"] as? String == "file://" + path)
            #expect(status?["bitrate"] as? Int == 64 && status?["videoFps"] as? Double == 0)
            #expect(status?["droppedVideoFrames"] as? Int == 0 && status?["droppedAudioFrames"] as? Int == 0)
            // Real time: AAC at 48 kHz is 46.9 frames/s; the first interval may be cut short by the output's start.
            let audioFps = status?["audioFps"] as? Double ?? 0
            #expect(audioFps > 20 && audioFps < 60, "audioFps \(audioFps)")
            #expect((status?["kbps"] as? Int ?? 0) > 0)

            try await client.execute(uri: "/v1/rooms/out", method: .get, headers: auth) { response in
                let json = try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any]
                let outputs = json?["outputs"] as? [[String: Any]]
                #expect(outputs?.count == 1 && outputs?.first?["state"] as? String == "connected")
                // The last interval's numbers (another interval may have ended since the event).
                #expect(
                    outputs?.first?["audioFps"] is Double && outputs?.first?["kbps"] is Int
                        && outputs?.first?["queueMs"] is Int)
                #expect(json?["statusIntervalMs"] as? Int == 1000)
            }
            try await client.execute(uri: "/v1/rooms/out/outputs/o1", method: .delete, headers: auth) {
                #expect($0.status == .noContent)
            }
            try await client.execute(uri: "/v1/rooms/out/outputs/o1", method: .delete, headers: auth) {
                #expect($0.status == .notFound)
            }
        }
    }

    /// The first event of `type` as JSON, or nil when none came within `timeout` seconds.
    static func firstEvent(
        of type: String, in events: AsyncStream<String>, timeout: Double
    ) async throws -> [String: Any]? {
        let text = await withTaskGroup(of: String?.self) { group in
            group.addTask {
                for await text in events where text.contains(#""type":"\#(type)""#) { return text }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(timeout))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        guard let text else { return nil }
        return try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
    }
}
