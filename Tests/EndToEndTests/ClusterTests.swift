import Foundation
import Synchronization
import Testing
import TestSupport

extension EndToEnd {
    /// Three `cohost serve` nodes sharing one PostgreSQL (a throwaway cluster): any node answers for any room, the
    /// owner's media address is in the answer, events come through any node, and a killed owner's room is taken
    /// over by another node, its output pushing again.
    @Suite struct ClusterTests {
        static func json(_ body: Data) throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        }

        static let clusterSecret = "cluster-0123456789abcdef0123456789abcdef"

        static func node(_ id: String, _ pg: PostgresServer, timeout: Int = 5) throws -> CohostHarness {
            try CohostHarness(
                arguments: CohostHarness.standardArguments + [
                    "--store", pg.url, "--node-id", id, "--node-timeout", "\(timeout)", "--participant-timeout", "60",
                    "--cluster-secret", clusterSecret, "--cluster-hosts", "127.0.0.1",
                ])
        }

        @Test func aCallThatSaysItWasForwardedWithoutTheClustersSignatureIsSentOnAsAnyClients() async throws {
            let pg = try PostgresServer()
            defer { pg.stop() }
            let nodes = try ["a", "b", "c"].map { try Self.node($0, pg) }
            let admin = nodes[0].token(room: "*", user: "producer", admin: true)
            #expect(
                await eventually(seconds: 5) {
                    nodes.allSatisfy { node in
                        ((try? Self.json(node.call("GET", "/v1/nodes", token: admin).body))?["nodes"] as? [Any])?
                            .count == 3
                    }
                })
            let room = Data(#"{"name":"signed","audioOnly":true}"#.utf8)
            #expect(try nodes[0].call("POST", "/v1/rooms", token: admin, body: room).status == 201)
            // Which node owns it: the others must send calls about it there.
            var owner: String?
            #expect(
                await eventually(seconds: 5) {
                    let list = (try? Self.json(nodes[0].call("GET", "/v1/nodes", token: admin).body))?["nodes"]
                    owner =
                        (list as? [[String: Any]])?.first { ($0["ownedRooms"] as? [String]) == ["signed"] }?["id"]
                        as? String
                    return owner != nil
                })
            let now = Int(Date().timeIntervalSince1970)
            // The marks a node puts on what it forwards, forged: no signature, a made-up one, one under another secret
            // (the format is right, the key is not).
            let forgeries: [[String: String]] = [
                ["X-Cohost-Forwarded-By": "a"],
                [
                    "X-Cohost-Forwarded-By": "a", "X-Cohost-Forwarded-At": "\(now)",
                    "X-Cohost-Forward-Signature": String(repeating: "0", count: 64),
                ],
                [
                    "X-Cohost-Forwarded-By": "a", "X-Cohost-Forwarded-At": "\(now)",
                    "X-Cohost-Forward-Signature": "3b5c1a0f2a9e6f5d1c8b7a6e5d4c3b2a1f0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c",
                ],
            ]
            for (id, node) in zip(["a", "b", "c"], nodes) where id != owner {
                for forged in forgeries {
                    // Honoured, the mark would make this node answer for itself: 404, no such room here.
                    let r = try node.call("GET", "/v1/rooms/signed", token: admin, headers: forged)
                    #expect(r.status == 200, "through \(id) with \(forged.keys.sorted()): \(r.status)")
                    #expect((try? Self.json(r.body))?["name"] as? String == "signed")
                }
            }
        }

        @Test func aFloodOfCallsForMadeUpRoomsQueriesNoStoreAndTakesNoRoomOver() async throws {
            let pg = try PostgresServer()
            defer { pg.stop() }
            let nodes = try ["a", "b", "c"].map { try Self.node($0, pg, timeout: 3) }
            let admin = nodes[0].token(room: "*", user: "producer", admin: true)
            func report() -> [[String: Any]] {
                ((try? Self.json(nodes[0].call("GET", "/v1/nodes", token: admin).body))?["nodes"] as? [[String: Any]])
                    ?? []
            }
            #expect(
                await eventually(seconds: 5) {
                    report().count == 3 && report().allSatisfy { $0["alive"] as? Bool == true }
                })
            #expect(
                try nodes[0].call(
                    "POST", "/v1/rooms", token: admin, body: Data(#"{"name":"kept","audioOnly":true}"#.utf8)
                )
                .status == 201)
            var owner: String?
            #expect(
                await eventually(seconds: 5) {
                    owner = report().first { ($0["ownedRooms"] as? [String]) == ["kept"] }?["id"] as? String
                    return owner != nil
                })
            // Statements the database ran: each autocommitted one is a transaction.
            func transactions() throws -> Int {
                let text = try pg.psql("SELECT xact_commit FROM pg_stat_database WHERE datname = 'postgres'")
                return Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
            }
            let before = try transactions()
            let floodStarted = Date()
            // Eight callers on threads of their own, each asking node b for rooms nobody ever made, as fast as it
            // answers, for 7 s (over twice node_timeout).
            let target = nodes[1]
            let tally = Mutex((total: 0, notFound: 0))
            let done = DispatchGroup()
            for _ in 0..<8 {
                done.enter()
                Thread.detachNewThread {
                    let end = Date().addingTimeInterval(7)
                    while Date() < end {
                        let status = (try? target.call("GET", "/v1/rooms/made-up-\(UUID().uuidString)", token: admin))?
                            .status
                        tally.withLock {
                            $0.total += 1
                            if status == 404 { $0.notFound += 1 }
                        }
                    }
                    done.leave()
                }
            }
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async {
                    done.wait()
                    continuation.resume()
                }
            }
            let answered = tally.withLock { ($0.total, $0.notFound) }
            let floodSeconds = Date().timeIntervalSince(floodStarted)
            let spent = try transactions() - before
            #expect(answered.0 > 400 && answered.1 == answered.0, "\(answered)")
            // Heartbeats (a write and two reads a second from each node, counted by the database as it flushes its
            // statistics) and a few lookups: nothing like a statement per call.
            #expect(spent >= 0 && spent < answered.0 / 10, "\(spent) statements for \(answered.0) calls")
            // Node b asked the store about 20 unknown names a second at most.
            let scraped = String(decoding: try target.call("GET", "/metrics", token: nil).body, as: UTF8.self)
            let lookups = EndToEnd.SchemaConformanceTests.metric("cohost_cluster_store_lookups", in: scraped)
            #expect(
                lookups.map { $0 <= 20 * (floodSeconds + 2) } == true,
                "store lookups: \(lookups ?? -1) in \(floodSeconds) s")
            // Nobody was late enough to lose a room.
            let after = report()
            #expect(after.count == 3 && after.allSatisfy { $0["alive"] as? Bool == true }, "\(after)")
            #expect(after.first { ($0["ownedRooms"] as? [String]) == ["kept"] }?["id"] as? String == owner)
        }

        @Test func aKickHoldsWhenItsRoomIsClosedAndCreatedAgainOnAnotherNode() async throws {
            let pg = try PostgresServer()
            defer { pg.stop() }
            let a = try Self.node("a", pg)
            let b = try Self.node("b", pg)
            let c = try Self.node("c", pg)
            let admin = a.token(room: "*", user: "producer", admin: true)
            #expect(
                await eventually(seconds: 5) {
                    ((try? Self.json(c.call("GET", "/v1/nodes", token: admin).body))?["nodes"] as? [Any])?.count == 3
                })
            let room = Data(#"{"name":"kicked","audioOnly":true}"#.utf8)
            #expect(try a.call("POST", "/v1/rooms", token: admin, body: room).status == 201)
            let bob = a.token(room: "kicked", user: "bob")
            func join(_ node: CohostHarness, ssrc: UInt32) throws -> (Int, String?) {
                let r = try node.call(
                    "POST", "/v1/rooms/kicked/participants", token: bob,
                    body: Data(CohostHarness.offer(audioSSRC: ssrc, videoSSRC: nil).utf8),
                    contentType: "application/sdp")
                let code = (try? Self.json(r.body))?["error"].flatMap { ($0 as? [String: Any])?["code"] as? String }
                return (r.status, code)
            }
            #expect(try join(c, ssrc: 7201).0 == 201)
            #expect(try b.call("DELETE", "/v1/rooms/kicked/participants/bob", token: admin).status == 204)
            #expect(try join(c, ssrc: 7202) == (403, "kicked"))
            // Closed through one node, created again on another: bob's token still opens nothing, on any node.
            #expect(try c.call("DELETE", "/v1/rooms/kicked", token: admin).status == 204)
            #expect(try b.call("POST", "/v1/rooms", token: admin, body: room).status == 201)
            let owner = try Self.json(b.call("GET", "/v1/nodes", token: admin).body)
            #expect(
                (owner["nodes"] as? [[String: Any]])?.first { ($0["ownedRooms"] as? [String]) == ["kicked"] }?["id"]
                    as? String == "b")
            for (name, node) in [("a", a), ("b", b), ("c", c)] {
                // A node learns the new owner from its next look at the store (503 room_unavailable until then).
                var result: (Int, String?) = (0, nil)
                _ = await eventually(seconds: 10) {
                    result = (try? join(node, ssrc: 7203)) ?? (0, nil)
                    return result.0 != 503
                }
                #expect(result == (403, "kicked"), "through \(name): \(result)")
            }
        }

        @Test func anyNodeAnswersForARoomAndAKilledOwnersRoomMovesWithItsOutput() async throws {
            let pg = try PostgresServer()
            defer { pg.stop() }
            let nginx = try NginxRTMP()
            defer { nginx.stop() }
            let a = try Self.node("a", pg)
            let b = try Self.node("b", pg)
            let c = try Self.node("c", pg)
            let admin = a.token(room: "*", user: "producer", admin: true)
            // Every node has seen the others' heartbeats before the room is placed.
            let seen = await eventually(seconds: 5) {
                ((try? Self.json(a.call("GET", "/v1/nodes", token: admin).body))?["nodes"] as? [Any])?.count == 3
            }
            #expect(seen)

            let created = try a.call(
                "POST", "/v1/rooms", token: admin,
                body: Data(
                    #"""
                    {"name":"clustered","canvas":{"width":320,"height":180,"fps":10},
                     "outputs":[{"url":"\#(nginx.url(stream: "clustered"))","backoff":{"initialMaxMs":300,"maxMs":1000}},
                                {"kind":"hls","segmentSeconds":1,"partSeconds":0.5}]}
                    """#.utf8))
            #expect(created.status == 201, "\(String(decoding: created.body, as: UTF8.self))")
            let nodes = try Self.json(c.call("GET", "/v1/nodes", token: admin).body)
            let owner = try #require(
                (nodes["nodes"] as? [[String: Any]])?.first { ($0["ownedRooms"] as? [String]) == ["clustered"] })
            #expect(owner["id"] as? String == "a" && owner["alive"] as? Bool == true, "\(nodes)")
            #expect(nodes["node"] as? String == "c")

            let events = EventRecorder(url: "ws://127.0.0.1:\(c.httpPort)/v1/rooms/clustered/events?token=\(admin)")
            events.start()
            defer { events.stop() }
            try await events.waitUntilConnected()
            try await Task.sleep(for: .milliseconds(500))  // the relay's own socket to the owner

            // HLS through a node that does not own the room, with the token in the URL as players give it.
            let viewer = a.token(room: "clustered", user: "watcher", viewer: true)
            let playlist = "/v1/rooms/clustered/hls/index.m3u8?token=\(viewer)"
            #expect(
                await eventually(seconds: 15, every: .milliseconds(100)) {
                    (try? c.call("GET", playlist, token: nil).status) == 200
                })
            let played = String(decoding: try c.call("GET", playlist, token: nil).body, as: UTF8.self)
            #expect(played.contains("#EXT-X-MAP:URI=\"init0.mp4?token=\(viewer)\""), "\(played)")
            #expect(try c.call("GET", "/v1/rooms/clustered/hls/init0.mp4?token=\(viewer)", token: nil).status == 200)

            // Joined through b: the answer sends media to a, the owner.
            let guest = b.token(room: "clustered", user: "guest")
            let joined = try b.call(
                "POST", "/v1/rooms/clustered/participants", token: guest,
                body: Data(CohostHarness.offer(audioSSRC: 7101, videoSSRC: nil).utf8), contentType: "application/sdp")
            #expect(joined.status == 201)
            let answer = String(decoding: joined.body, as: UTF8.self)
            #expect(answer.contains("m=audio \(a.rtpPort) "), "\(answer)")
            let room = try Self.json(c.call("GET", "/v1/rooms/clustered", token: admin).body)
            #expect((room["participants"] as? [[String: Any]])?.map { $0["userId"] as? String } == ["guest"])
            let list = try Self.json(b.call("GET", "/v1/rooms", token: admin).body)
            #expect((list["rooms"] as? [[String: Any]])?.map { $0["name"] as? String } == ["clustered"])

            // Kicked through c; the events reach the socket opened on c.
            #expect(try c.call("DELETE", "/v1/rooms/clustered/participants/guest", token: admin).status == 204)
            let kicked = await eventually(seconds: 5) {
                events.messages.contains { $0.contains(#""type":"participant_kicked""#) }
            }
            #expect(kicked, "\(events.messages)")
            #expect(events.messages.contains { $0.contains(#""type":"participant_joined""#) })
            let pushing = await eventually(seconds: 10) {
                let room = try? Self.json(b.call("GET", "/v1/rooms/clustered", token: admin).body)
                return ((room?["outputs"] as? [[String: Any]])?.first?["state"] as? String) == "connected"
            }
            #expect(pushing)

            // The owner dies without a word; another node takes the room and its output over.
            kill(a.process.processIdentifier, SIGKILL)
            let killedAt = Date()
            var newOwner: String?
            let movedAndPushing = await eventually(seconds: 15) {
                guard let room = try? Self.json(c.call("GET", "/v1/rooms/clustered", token: admin).body),
                    ((room["outputs"] as? [[String: Any]])?.first?["state"] as? String) == "connected",
                    let nodes = try? Self.json(b.call("GET", "/v1/nodes", token: admin).body)
                else { return false }
                newOwner =
                    (nodes["nodes"] as? [[String: Any]])?.first { ($0["ownedRooms"] as? [String]) == ["clustered"] }?[
                        "id"] as? String
                return newOwner == "b" || newOwner == "c"
            }
            let moved = Date().timeIntervalSince(killedAt)
            #expect(movedAndPushing, "not taken over within 15 s: \(b.process.output.suffix(2000))")
            print(
                "cluster: room moved from a to \(newOwner ?? "-") and pushing again \(Int(moved * 1000)) ms after a was killed"
            )
            let pulled = try pullProgramme(url: nginx.url(stream: "clustered"), seconds: 2)
            defer { try? FileManager.default.removeItem(atPath: pulled) }
            #expect(try FLVProbe.tags(path: pulled).contains { $0.isVideo })
            // The kick moved with the room.
            let again = try c.call(
                "POST", "/v1/rooms/clustered/participants", token: guest,
                body: Data(CohostHarness.offer(audioSSRC: 7102, videoSSRC: nil).utf8), contentType: "application/sdp")
            #expect(again.status == 403, "\(String(decoding: again.body, as: UTF8.self))")
        }
    }
}
