import Foundation
import Testing
import TestSupport

extension EndToEnd {
    /// SIGTERM on a cluster node with a recording, a webhook receiver and a participant: the services stop in the
    /// order `ServerServices` states, within systemd's stop timeout (`TimeoutStopSec=20` in deploy/cohost.service),
    /// and nothing in flight is lost: the recording ends whole, the rooms' last events reach the webhook, and the
    /// room stays in the store for the next owner.
    @Suite struct ShutdownTests {
        @Test func sigtermStopsTheServicesInOrderAndLosesNothingInFlight() async throws {
            let pg = try PostgresServer()
            defer { pg.stop() }
            let receiver = try WebhookReceiver()
            defer { receiver.stop() }
            let node = try CohostHarness(
                arguments: CohostHarness.standardArguments + [
                    "--store", pg.url, "--node-id", "solo", "--webhook-url", "http://127.0.0.1:\(receiver.port)/hook",
                    "--webhook-secret", "hook-0123456789abcdef0123456789ab", "--cluster-secret",
                    "cluster-0123456789abcdef0123456789abcdef",
                ])
            let admin = node.token(room: "*", user: "producer", admin: true)
            let file = "shutdown-\(UUID().uuidString).flv"
            let path = FileManager.default.temporaryDirectory.appendingPathComponent(file).path
            defer { try? FileManager.default.removeItem(atPath: path) }
            let created = try node.call(
                "POST", "/v1/rooms", token: admin,
                body: Data(
                    #"{"name":"ending","canvas":{"width":320,"height":180,"fps":10},"outputs":[{"url":"file://\#(file)"}]}"#
                        .utf8))
            #expect(created.status == 201, "\(String(decoding: created.body, as: UTF8.self))")
            let joined = try node.call(
                "POST", "/v1/rooms/ending/participants", token: node.token(room: "ending", user: "ann"),
                body: Data(CohostHarness.offer(audioSSRC: 6301, videoSSRC: nil).utf8), contentType: "application/sdp")
            #expect(joined.status == 201)
            // A few seconds of programme, and a heartbeat in the store.
            let recording = await eventually(seconds: 10) {
                ((try? FLVProbe.tags(path: path)) ?? []).contains { $0.isKeyframe }
            }
            #expect(recording)
            #expect(try pg.psql("SELECT count(*) FROM nodes WHERE id = 'solo'").contains("1"))

            let start = Date()
            kill(node.process.processIdentifier, SIGTERM)
            let status = node.process.waitForExit(timeout: 20)
            let seconds = Date().timeIntervalSince(start)
            let log = node.process.output
            #expect(status == 0, "exit \(String(describing: status)) after \(seconds) s: \(log.suffix(3000))")
            #expect(seconds < 20)

            let stopped = log.split(separator: "\n").compactMap { line -> String? in
                guard line.contains("service stopped"), let range = line.range(of: "service=") else { return nil }
                return String(line[range.upperBound...].prefix { $0 != " " && $0 != "]" })
            }
            #expect(stopped == ["sweep", "transports", "rooms", "media", "webhooks", "cluster"], "\(log.suffix(3000))")

            // The recording was closed, not cut: every tag whole, the last one a media tag.
            let tags = try FLVProbe.tags(path: path)
            #expect(tags.filter(\.isKeyframe).count >= 1 && tags.last?.isMedia == true)
            // The last events, published while the rooms closed, were delivered before the dispatcher stopped.
            let bodies = receiver.requests.map { String(decoding: $0.body, as: UTF8.self) }
            #expect(bodies.contains { $0.contains(#""type":"room_closed""#) }, "\(bodies)")
            #expect(bodies.contains { $0.contains(#""type":"participant_left""#) && $0.contains(#""room_closed""#) })
            // A stop is not a delete: the room is still this node's in the store, for a takeover or a restart.
            #expect(try pg.psql("SELECT owner FROM rooms WHERE name = 'ending'").contains("solo"))
        }
    }
}
