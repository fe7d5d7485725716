import Foundation
import Testing
import Hummingbird
import Logging
import Prometheus
import Rooms
import TestSupport
@testable import Server

/// `GET /v1/rooms/{room}/snapshot`, in-process: real RoomManager and PNG encoder, ffmpeg decodes the answer.
@Suite(.serialized) struct SnapshotRouteTests {
    static let keys = APIKeys(["k1": "s1"])

    func createRoom(_ client: RouterClient, _ json: String) async throws {
        let admin = token(room: "*", user: "boss", admin: true)
        try await client.execute(
            uri: "/v1/rooms", method: .post, headers: [.authorization: "Bearer \(admin)"],
            body: ByteBuffer(string: json)
        ) { #expect($0.status == .created) }
    }

    static func bigEndian32(_ b: [UInt8], at i: Int) -> Int {
        Int(b[i]) << 24 | Int(b[i + 1]) << 16 | Int(b[i + 2]) << 8 | Int(b[i + 3])
    }

    @Test func aVideoRoomsSnapshotIsAPNGOfItsCanvas() async throws {
        try await withApp { client, _ in
            try await createRoom(
                client,
                ##"{"name":"cam","canvas":{"width":320,"height":180,"fps":10,"background":"#808080"},"video":{"bitrate":300}}"##
            )
            let admin = token(room: "cam", user: "mod", admin: true)
            try await client.execute(
                uri: "/v1/rooms/cam/snapshot", method: .get, headers: [.authorization: "Bearer \(admin)"]
            ) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "image/png")
                #expect(response.headers[.cacheControl] == "no-store")
                let png = Array(response.body.readableBytesView)
                #expect(Array(png.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
                guard png.count > 24 else {
                    Issue.record("PNG of \(png.count) bytes")
                    return
                }
                #expect(Self.bigEndian32(png, at: 16) == 320 && Self.bigEndian32(png, at: 20) == 180)
                // Nobody is in the room: the whole canvas is the background, grey 128 after YUV and back.
                let rgb = try decodePNGWithFFmpeg(png)
                #expect(rgb.count == 320 * 180 * 3)
                #expect(rgb.allSatisfy { $0 == 128 })
            }
        }
    }

    @Test func anAudioOnlyRoomIs409AudioOnly() async throws {
        try await withApp { client, _ in
            try await createRoom(client, #"{"name":"radio","audioOnly":true}"#)
            let admin = token(room: "radio", user: "mod", admin: true)
            try await client.execute(
                uri: "/v1/rooms/radio/snapshot", method: .get, headers: [.authorization: "Bearer \(admin)"]
            ) {
                #expect($0.status == .conflict)
                #expect(errorCode($0) == "audio_only")
            }
        }
    }

    @Test func refusalsFollowTheOtherRoutes() async throws {
        try await withApp { client, _ in
            try await createRoom(
                client, #"{"name":"cam","canvas":{"width":320,"height":180,"fps":10},"video":{"bitrate":300}}"#)
            let admin = token(room: "*", user: "boss", admin: true)
            try await client.execute(
                uri: "/v1/rooms/nope/snapshot", method: .get, headers: [.authorization: "Bearer \(admin)"]
            ) {
                #expect($0.status == .notFound)
                #expect(errorCode($0) == "not_found")
            }
            try await client.execute(uri: "/v1/rooms/cam/snapshot", method: .get) {
                #expect($0.status == .unauthorized)
                #expect(errorCode($0) == "token_missing")
            }
            let participant = token(room: "cam", user: "alice", admin: false)
            try await client.execute(
                uri: "/v1/rooms/cam/snapshot", method: .get, headers: [.authorization: "Bearer \(participant)"]
            ) {
                #expect($0.status == .forbidden)
                #expect(errorCode($0) == "forbidden")
            }
            let otherRoom = token(room: "other", user: "mod", admin: true)
            try await client.execute(
                uri: "/v1/rooms/cam/snapshot", method: .get, headers: [.authorization: "Bearer \(otherRoom)"]
            ) {
                #expect($0.status == .forbidden)
            }
            try await client.execute(
                uri: "/v1/rooms/bad%20name/snapshot", method: .get, headers: [.authorization: "Bearer \(admin)"]
            ) {
                #expect($0.status == .badRequest)
                #expect(errorCode($0) == "invalid_room")
            }
        }
    }
}
