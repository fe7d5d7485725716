import Foundation
import Testing
import Rooms
import TestSupport

/// 50 joins and leaves leave nothing behind: no participant (admin API, metrics), no SSRC binding
/// (`cohost_ssrc_bindings` back where it was, every SSRC can be joined again, packets for them count as unknown), no file descriptor and no
/// thread of the server process beyond a small margin.
extension EndToEnd.SchemaConformanceTests {
    static let loopSSRCBase: UInt32 = 20_000

    /// Audio SSRC of iteration `i` (4 alternating values), and a video SSRC on even iterations.
    static func loopSSRCs(_ i: Int) -> (audio: UInt32, video: UInt32?) {
        let audio = loopSSRCBase + UInt32(i % 4) * 2
        return (audio, i % 2 == 0 ? audio + 1 : nil)
    }

    @Test func fiftyJoinsAndLeavesLeaveNothingBehind() async throws {
        let s = try conformanceServer()
        #expect(
            try s.call("POST", "/v1/rooms", token: s.root, json: #"{"name":"churn",\#(Self.smallVideo)}"#).status == 201
        )
        let events = try await s.events(room: "churn", token: s.root)
        // Warm up what the first participant creates once per process (decoder libraries, worker threads).
        let warm = Self.mint(sub: "warm", room: "churn")
        #expect(
            try s.call(
                "POST", "/v1/rooms/churn/participants", token: warm,
                sdp: CohostHarness.offer(audioSSRC: 21001, videoSSRC: 21002)
            ).status == 201)
        #expect(try s.call("DELETE", "/v1/rooms/churn/participants/warm", token: warm).status == 204)
        try await Task.sleep(for: .milliseconds(500))
        let before = try Self.processCounts(s.pid)
        let bindingsBefore = Self.metric("cohost_ssrc_bindings", in: try s.call("GET", "/metrics").text)
        #expect(bindingsBefore != nil)

        var kicked = 0
        for i in 0..<50 {
            let user = "c\(i)"
            let token = Self.mint(sub: user, room: "churn")
            let (audio, video) = Self.loopSSRCs(i)
            let join = try s.call(
                "POST", "/v1/rooms/churn/participants", token: token,
                sdp: CohostHarness.offer(audioSSRC: audio, videoSSRC: video))
            #expect(join.status == 201, "join \(i): \(join.text)")
            // Every third leaves by being kicked, the others by their own DELETE.
            let kick = i % 3 == 2
            if kick { kicked += 1 }
            let leave = try s.call("DELETE", "/v1/rooms/churn/participants/\(user)", token: kick ? s.root : token)
            #expect(leave.status == 204, "leave \(i): \(leave.text)")
        }

        let room = try s.call("GET", "/v1/rooms/churn", token: s.root)
        #expect((room.json?["participants"] as? [Any])?.isEmpty == true)
        let rooms = (try s.call("GET", "/v1/rooms", token: s.root).json?["rooms"] as? [[String: Any]]) ?? []
        let present = rooms.reduce(0) { $0 + (($1["participants"] as? [Any])?.count ?? 0) }
        let metrics = try s.call("GET", "/metrics").text
        #expect(Self.metric("cohost_participants", in: metrics) == Double(present), "\(metrics.prefix(1500))")
        let departed = metrics.split(separator: "\n").filter {
            $0.hasPrefix("cohost_stream_") && $0.contains(#"room="churn""#)
        }
        #expect(departed.isEmpty, "per-stream gauges of departed participants remain: \(departed.prefix(3))")
        // The SSRC table, counted: back to its size before the loop (other suites' rooms may hold some).
        #expect(Self.metric("cohost_ssrc_bindings", in: metrics) == bindingsBefore)

        // The SSRC table: packets for every SSRC the loop used are now unknown ...
        let unknownBefore = Self.metric("cohost_udp_dropped", labels: #"reason="unknown_ssrc""#, in: metrics) ?? 0
        let used = Set(
            (0..<4).flatMap { i -> [UInt32] in
                let (a, v) = Self.loopSSRCs(i)
                return [a] + (v.map { [$0] } ?? [])
            })
        sendDatagrams(used.sorted().map(Self.rtpPacket), toPort: s.harness.rtpPort)
        var unknownAfter = unknownBefore
        await eventually(seconds: 3) {
            unknownAfter =
                (try? s.call("GET", "/metrics").text).flatMap {
                    Self.metric("cohost_udp_dropped", labels: #"reason="unknown_ssrc""#, in: $0)
                } ?? 0
            return unknownAfter >= unknownBefore + Double(used.count)
        }
        #expect(unknownAfter == unknownBefore + Double(used.count), "\(used.count) packets for released SSRCs")
        // ... and each can be joined again (a leftover binding would be 409 ssrc_conflict).
        let probe = Self.mint(sub: "probe", room: "churn")
        for i in 0..<4 {
            let (audio, video) = Self.loopSSRCs(i)
            let again = try s.call(
                "POST", "/v1/rooms/churn/participants", token: probe,
                sdp: CohostHarness.offer(audioSSRC: audio, videoSSRC: video))
            #expect(again.status == 201, "SSRC \(audio) still bound: \(again.text)")
        }
        #expect(try s.call("DELETE", "/v1/rooms/churn/participants/probe", token: probe).status == 204)

        // Descriptors and threads come back (decoder and worker threads may take a moment to end).
        var after = try Self.processCounts(s.pid)
        await eventually(seconds: 5) {
            after = (try? Self.processCounts(s.pid)) ?? after
            return after.fds <= before.fds + 2 && after.threads <= before.threads + 2
        }
        #expect(after.fds <= before.fds + 2, "open fds \(before.fds) before the loop, \(after.fds) after")
        #expect(
            after.threads <= before.threads + 2, "threads \(before.threads) before the loop, \(after.threads) after")

        #expect(try s.call("DELETE", "/v1/rooms/churn", token: s.root).status == 204)
        await eventually(seconds: 5) { events.isClosed }
        let kinds = EndToEnd.RoomServiceTests.types(events.messages)
        #expect(kinds.filter { $0.hasPrefix("participant_joined c") }.count == 50)
        #expect(kinds.filter { $0.hasPrefix("participant_left c") && $0.hasSuffix(" left") }.count == 50 - kicked)
        #expect(kinds.filter { $0.hasPrefix("participant_left c") && $0.hasSuffix(" kicked") }.count == kicked)
        #expect(kinds.filter { $0.hasPrefix("participant_kicked c") }.count == kicked)
    }

    /// Open file descriptors and threads of a process, from /proc.
    static func processCounts(_ pid: Int32) throws -> (fds: Int, threads: Int) {
        let fds = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = status.split(separator: "\n").first { $0.hasPrefix("Threads:") }
        let threads = line.flatMap { Int($0.dropFirst("Threads:".count).trimmingCharacters(in: .whitespaces)) } ?? -1
        return (fds, threads)
    }

    /// The value of a Prometheus sample `name{labels} value` (labels matched as a substring), or nil.
    static func metric(_ name: String, labels: String? = nil, in text: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(name) && !line.hasPrefix("#") {
            let rest = line.dropFirst(name.count)
            guard rest.first == " " || rest.first == "{" else { continue }
            if let labels, !rest.contains(labels) { continue }
            if let value = rest.split(separator: " ").last.flatMap({ Double($0) }) { return value }
        }
        return nil
    }

    /// A minimal RTP packet (Opus payload type) for `ssrc`.
    static func rtpPacket(_ ssrc: UInt32) -> [UInt8] { rtpPacketBytes(ssrc: ssrc, payload: [0xF8, 0xFF, 0xFE]) }
}
