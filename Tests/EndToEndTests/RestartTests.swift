import Foundation
import Testing
import TestSupport

extension EndToEnd {
    /// A server stopped with SIGTERM and started again on the same data directory (the SQLite store) has its rooms
    /// back as they were: layout, pictures' colours, outputs pushing again, kicks still refusing.
    @Suite struct RestartTests {
        static let layout =
            #"{"mode":"custom","regions":[{"userId":"ann","x":20,"y":10,"width":160,"height":90,"z":1,"fit":"contain","alpha":1}]}"#

        static func json(_ body: Data) throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        }

        @Test func aRestartedServerHasItsRoomsLayoutsKicksAndOutputsBack() async throws {
            let nginx = try NginxRTMP()
            defer { nginx.stop() }
            let dataDir = FileManager.default.temporaryDirectory.appendingPathComponent(
                "cohost-restart-\(UUID().uuidString)"
            ).path
            defer { try? FileManager.default.removeItem(atPath: dataDir) }

            let first = try CohostHarness(dataDir: dataDir)
            let admin = first.token(room: "*", user: "producer", admin: true)
            let created = try first.call(
                "POST", "/v1/rooms", token: admin,
                body: Data(
                    #"""
                    {"name":"kept","canvas":{"width":320,"height":180,"fps":10,"background":"#204060"},
                     "outputs":[{"url":"\#(nginx.url(stream: "kept"))","backoff":{"initialMaxMs":300,"maxMs":1000}}]}
                    """#.utf8))
            #expect(created.status == 201, "\(String(decoding: created.body, as: UTF8.self))")
            let laidOut = try first.call("PUT", "/v1/rooms/kept/layout", token: admin, body: Data(Self.layout.utf8))
            #expect(laidOut.status == 200)
            #expect(
                try first.call("POST", "/v1/rooms", token: admin, body: Data(#"{"name":"gone"}"#.utf8)).status == 201)
            #expect(try first.call("DELETE", "/v1/rooms/gone", token: admin).status == 204)
            let bob = first.token(room: "kept", user: "bob")
            let joined = try first.call(
                "POST", "/v1/rooms/kept/participants", token: bob,
                body: Data(CohostHarness.offer(audioSSRC: 6101, videoSSRC: nil).utf8), contentType: "application/sdp")
            #expect(joined.status == 201)
            #expect(try first.call("DELETE", "/v1/rooms/kept/participants/bob", token: admin).status == 204)
            let before = try Self.json(first.call("GET", "/v1/rooms/kept", token: admin).body)
            first.process.terminate()
            #expect(first.process.waitForExit(timeout: 1) == 0, "\(first.process.output.suffix(2000))")

            let second = try CohostHarness(dataDir: dataDir)
            let list = try Self.json(second.call("GET", "/v1/rooms", token: admin).body)
            #expect((list["rooms"] as? [[String: Any]])?.map { $0["name"] as? String } == ["kept"])
            let after = try Self.json(second.call("GET", "/v1/rooms/kept", token: admin).body)
            for key in ["layout", "canvas", "video", "audio", "maxParticipants", "returnVideo"] {
                #expect(
                    (after[key] as? NSObject) == (before[key] as? NSObject), "\(key): \(String(describing: after[key]))"
                )
            }
            let outputs = try #require(after["outputs"] as? [[String: Any]])
            #expect(outputs.map { $0["url"] as? String } == [nginx.url(stream: "kept")])
            let pushing = await eventually(seconds: 10) {
                let room = try? Self.json(second.call("GET", "/v1/rooms/kept", token: admin).body)
                return ((room?["outputs"] as? [[String: Any]])?.first?["state"] as? String) == "connected"
            }
            #expect(pushing, "\(second.process.output.suffix(3000))")
            let pulled = try pullProgramme(url: nginx.url(stream: "kept"), seconds: 2)
            defer { try? FileManager.default.removeItem(atPath: pulled) }
            #expect(try FLVProbe.tags(path: pulled).contains { $0.isVideo }, "no picture in the restored programme")

            // The kick outlived the process: bob's token from before it is refused; ann joins.
            let refused = try second.call(
                "POST", "/v1/rooms/kept/participants", token: bob,
                body: Data(CohostHarness.offer(audioSSRC: 6102, videoSSRC: nil).utf8), contentType: "application/sdp")
            #expect(refused.status == 403)
            #expect(String(decoding: refused.body, as: UTF8.self).contains(#""code":"kicked""#))
            let ann = try second.call(
                "POST", "/v1/rooms/kept/participants", token: second.token(room: "kept", user: "ann"),
                body: Data(CohostHarness.offer(audioSSRC: 6103, videoSSRC: nil).utf8), contentType: "application/sdp")
            #expect(ann.status == 201)
        }

        /// Events queued for a webhook whose receiver is down are in the store when the server stops, and are
        /// delivered by the next start once the receiver is up (at least once, under their own event ids).
        @Test func webhookDeliveriesPendingAtAStopAreSentAfterTheRestart() async throws {
            let dataDir = FileManager.default.temporaryDirectory.appendingPathComponent(
                "cohost-restart-\(UUID().uuidString)"
            ).path
            defer { try? FileManager.default.removeItem(atPath: dataDir) }
            let port = try FreePort.tcp()  // nothing listens there yet
            let arguments =
                CohostHarness.standardArguments + [
                    "--webhook-url", "http://127.0.0.1:\(port)/hook", "--webhook-secret",
                    "hook-0123456789abcdef0123456789ab",
                ]
            let first = try CohostHarness(arguments: arguments, dataDir: dataDir)
            let joined = try first.call(
                "POST", "/v1/rooms/hooked/participants", token: first.token(room: "hooked", user: "ann"),
                body: Data(CohostHarness.offer(audioSSRC: 6201, videoSSRC: nil).utf8), contentType: "application/sdp")
            #expect(joined.status == 201)
            try await Task.sleep(for: .milliseconds(500))  // the journal is written off the event's thread
            first.process.terminate()

            let receiver = try WebhookReceiver(port: port)
            defer { receiver.stop() }
            let second = try CohostHarness(arguments: arguments, dataDir: dataDir)
            let delivered = await eventually(seconds: 10) {
                receiver.requests.contains {
                    let body = String(decoding: $0.body, as: UTF8.self)
                    return body.contains(#""type":"participant_joined""#) && body.contains(#""userId":"ann""#)
                }
            }
            #expect(delivered, "\(receiver.requests.map { String(decoding: $0.body, as: UTF8.self) })")
            let joins = receiver.requests.filter {
                String(decoding: $0.body, as: UTF8.self).contains(#""type":"participant_joined""#)
            }
            #expect(joins.count == 1 && joins.first?.headers["x-cohost-event-id"]?.count == 36)
            #expect(
                second.process.output.contains("webhook deliveries resumed"), "\(second.process.output.suffix(2000))")
        }
    }
}
