import Foundation
import Testing
import Logging
import WSClient
import TestSupport

extension EndToEnd {
    /// The whole path with real processes: ffmpeg participants → cohost → nginx-rtmp → ffmpeg pull.
    @Suite struct WalkingSkeletonTests {
        // 1280×720 canvas: three 640×360 regions, the bottom-right quarter stays background.
        static let regions: [(user: String, colour: String, rgb: (Int, Int, Int), tone: Int, x: Int, y: Int)] = [
            ("alice", "red", (255, 0, 0), 400, 0, 0),
            ("bob", "lime", (0, 255, 0), 700, 640, 0),
            ("carol", "blue", (0, 0, 255), 1100, 0, 360),
        ]
        static let background = (128, 128, 128)

        @Test func threeParticipantsAreMixedPublishedAndOneIsKicked() async throws {
            let nginx = try NginxRTMP()
            defer { nginx.stop() }
            let cohost = try CohostHarness()
            let room = "show1"
            let admin = cohost.token(room: room, user: "producer", admin: true)
            let regions = Self.regions.map { r in
                #"{"userId":"\#(r.user)","x":\#(r.x),"y":\#(r.y),"width":640,"height":360}"#
            }.joined(separator: ",")
            let create = #"""
                {"name":"\#(room)","canvas":{"width":1280,"height":720,"fps":30,"background":"#808080"},
                 "video":{"bitrate":1500,"keyint":1},"layout":{"mode":"custom","regions":[\#(regions)]},
                 "outputs":[{"url":"\#(nginx.url(stream: room))"}]}
                """#
            let created = try cohost.call("POST", "/v1/rooms", token: admin, body: Data(create.utf8))
            #expect(created.status == 201, "\(String(decoding: created.body, as: UTF8.self))")

            let events = EventRecorder(url: "ws://127.0.0.1:\(cohost.httpPort)/v1/rooms/\(room)/events?token=\(admin)")
            events.start()
            defer { events.stop() }
            try await events.waitUntilConnected()

            var senders: [ManagedProcess] = []
            defer { senders.forEach { $0.terminate() } }
            for (i, r) in Self.regions.enumerated() {
                let audioSSRC = UInt32(1000 + i), videoSSRC = UInt32(2000 + i)
                let joined = try cohost.call(
                    "POST", "/v1/rooms/\(room)/participants",
                    token: cohost.token(room: room, user: r.user),
                    body: Data(CohostHarness.offer(audioSSRC: audioSSRC, videoSSRC: videoSSRC).utf8),
                    contentType: "application/sdp")
                #expect(joined.status == 201)
                #expect(joined.headers["location"] == "/v1/rooms/\(room)/participants/\(r.user)")
                let answer = String(decoding: joined.body, as: UTF8.self)
                #expect(answer.contains("m=audio \(cohost.rtpPort) RTP/AVP 111"))
                #expect(answer.contains("m=video \(cohost.rtpPort) RTP/AVP 96"))
                senders.append(
                    try startFFmpegParticipant(
                        rtpPort: cohost.rtpPort, colour: r.colour, toneHz: r.tone,
                        audioSSRC: audioSSRC, videoSSRC: videoSSRC))
            }

            // Hostile input while everyone streams: garbage, truncated and spoofed datagrams at carol's
            // video SSRC, on both ports, from an address that did not latch. Her tile must stay intact.
            try await Task.sleep(for: .seconds(1))
            let hostile = hostileDatagrams(ssrc: 2002, count: 500)
            sendDatagrams(hostile, toPort: cohost.rtpPort)
            sendDatagrams(hostile, toPort: cohost.rtpPort + 1)

            // Let every tile get its first keyframe (however long three ffmpeg starts take on this machine), then
            // pull 4 s of the programme.
            _ = await eventually(seconds: 20) {
                let info = try? cohost.call("GET", "/v1/rooms/\(room)", token: admin)
                let json = info.flatMap { try? JSONSerialization.jsonObject(with: $0.body) as? [String: Any] }
                let streams = (json?["participants"] as? [[String: Any]] ?? []).flatMap {
                    $0["streams"] as? [[String: Any]] ?? []
                }
                return streams.count == 6
                    && streams.allSatisfy {
                        ($0["framesDecoded"] as? Int ?? 0) > 10 && ($0["packets"] as? Int ?? 0) > 20
                    }
            }
            let info = try cohost.call("GET", "/v1/rooms/\(room)", token: admin)
            let json = try JSONSerialization.jsonObject(with: info.body) as? [String: Any]
            let participants = json?["participants"] as? [[String: Any]] ?? []
            #expect(participants.map { $0["userId"] as? String } == ["alice", "bob", "carol"])
            for p in participants {
                for stream in p["streams"] as? [[String: Any]] ?? [] {
                    #expect(
                        (stream["packets"] as? Int ?? 0) > 20,
                        "\(p["userId"] ?? "?") \(stream["kind"] ?? "?") received too few packets")
                    #expect((stream["framesDecoded"] as? Int ?? 0) > 10)
                }
            }
            let metrics = String(decoding: try cohost.call("GET", "/metrics", token: nil).body, as: UTF8.self)
            #expect(metrics.contains("cohost_udp_dropped"), "\(metrics.prefix(400))")
            let pulled = try pullProgramme(url: nginx.url(stream: room), seconds: 4)
            let streams = try ffprobeStreams(url: pulled)
            #expect(streams.contains { $0.codec == "h264" && $0.width == 1280 && $0.height == 720 })
            #expect(streams.contains { $0.codec == "aac" })

            let rgb = try decodeFirstVideoFrameRGB(path: pulled, width: 1280, height: 720, seekSeconds: 2.0)
            for r in Self.regions {
                expectColour(rgb, width: 1280, x: r.x + 320, y: r.y + 180, r.rgb, "\(r.user)'s region")
            }
            expectColour(rgb, width: 1280, x: 960, y: 540, Self.background, "background")

            let pcm = try decodeAudioS16Mono(url: pulled, seconds: 3)
            let samples = pcm.map { Float($0) / 32768 }
            let off = Goertzel.power(samples: samples, sampleRate: 48_000, frequency: 250)
            for r in Self.regions {
                let on = Goertzel.power(samples: samples, sampleRate: 48_000, frequency: Double(r.tone))
                #expect(on > 20 * off, "tone \(r.tone) Hz of \(r.user): power \(on) vs off-tone \(off)")
            }

            // Kick bob: his region turns to background, and the event says why.
            let kick = try cohost.call("DELETE", "/v1/rooms/\(room)/participants/bob", token: admin)
            #expect(kick.status == 204)
            senders[1].terminate()
            try await Task.sleep(for: .seconds(2))
            let after = try pullProgramme(url: nginx.url(stream: room), seconds: 2)
            let rgbAfter = try decodeFirstVideoFrameRGB(path: after, width: 1280, height: 720, seekSeconds: nil)
            expectColour(rgbAfter, width: 1280, x: 960, y: 180, Self.background, "bob's region after the kick")
            expectColour(rgbAfter, width: 1280, x: 320, y: 180, Self.regions[0].rgb, "alice's region after the kick")

            let received = events.messages
            #expect(
                received.contains { $0.contains(#""type":"participant_joined""#) && $0.contains(#""userId":"carol""#) })
            #expect(
                received.contains {
                    $0.contains(#""type":"participant_left""#) && $0.contains(#""reason":"kicked""#)
                        && $0.contains(#""userId":"bob""#)
                })
        }
    }
}

/// Collects a room's events from its WebSocket in the background.
final class EventRecorder: @unchecked Sendable {
    let url: String
    private let lock = NSLock()
    private var received: [String] = []
    private var connected = false
    private var task: Task<Void, Never>?

    init(url: String) { self.url = url }

    var messages: [String] { lock.withLock { received } }

    func start() {
        task = Task {
            _ = try? await WebSocketClient.connect(url: url, logger: Logger(label: "events")) { inbound, _, _ in
                self.lock.withLock { self.connected = true }
                for try await message in inbound.messages(maxSize: 1 << 16) {
                    if case .text(let text) = message { self.lock.withLock { self.received.append(text) } }
                }
            }
        }
    }

    func stop() { task?.cancel() }

    /// Waits (up to 5 s) until the socket is open, so no event published after this is missed.
    func waitUntilConnected() async throws {
        for _ in 0..<100 where !lock.withLock({ connected }) { try await Task.sleep(for: .milliseconds(50)) }
    }
}
