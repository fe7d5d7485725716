import CohostAPI
import CohostClient
import Foundation

/// What a load test saw, per room: from the participants' side (join times, what they sent, what came back) and
/// from the server's (its room view at the end of the hold, and its /metrics when the token may read them).
public struct LoadReport: Sendable, Encodable {
    public struct Room: Sendable, Encodable {
        public var name: String
        public var participants: Int
        public var joinMsMedian: Double
        public var joinMsMax: Double
        /// Sent by the load tester, per participant and second.
        public var sentPacketsPerSecond: Double
        public var sentKbps: Double
        /// The server's view: decoded video fps of the slowest sender, received audio kb/s summed, packets lost,
        /// audio underruns, and video frames it dropped to keep up (decode budget or full decode queue).
        public var serverVideoFpsMin: Int?
        public var serverAudioKbps: Int
        public var serverLost: Int
        public var serverUnderruns: Int
        public var serverFramesDropped: Int
        /// Came back per participant and second: mix-minus packets, room-view frames, RTCP.
        public var returnAudioPacketsPerSecond: Double
        public var returnVideoFps: Double
        public var returnRTCPPerSecond: Double
        /// Came on the receive slots, per participant: packets a second and kb/s (with --slots).
        public var forwardedPacketsPerSecond: Double
        public var forwardedKbps: Double
        /// The room's output: its state and kb/s (room view), and its video fps (metrics).
        public var outputState: String?
        public var outputKbps: Int?
        public var outputVideoFps: Double?
        /// Every sender decoded at (at least 90 % of) the rate it sends, none of its frames dropped, and the
        /// programme (when pushed) at 90 % of its frame rate.
        public var realTime: Bool
    }

    public var rooms: [Room]
    public var heldSeconds: Double
    public var participants: Int
    public var videoFps: Int
    /// From /metrics: mixing ticks the room clocks skipped, and datagrams the media port dropped (all reasons).
    public var clockSkippedTicks: Int?
    public var udpDropped: Int?
    /// Why /metrics was not read (its own token, say), when it was not.
    public var metricsNote: String?

    init(
        plan: LoadTestPlan, rooms names: [String], participants: [LoadParticipant], serverRooms: [String: Data],
        metrics: String?, heldSeconds: Double
    ) throws {
        self.heldSeconds = heldSeconds
        self.participants = participants.count
        videoFps = plan.audioOnly ? 0 : plan.video.fps
        let gauges = metrics.map(PrometheusText.parse) ?? []
        metricsNote = metrics == nil ? "the token could not read /metrics (a metrics_token is set?)" : nil
        clockSkippedTicks = metrics == nil ? nil : Int(gauges.sum("cohost_clock_skipped_ticks"))
        udpDropped = metrics == nil ? nil : Int(gauges.sum("cohost_udp_dropped"))
        let seconds = max(heldSeconds, 0.001)
        rooms = try names.map { name in
            let members = participants.filter { $0.room == name }
            let view = try serverRooms[name].map { try JSONDecoder().decode(RoomInfo.self, from: $0) }
            let streams = view?.participants.flatMap(\.streams) ?? []
            let video = streams.filter { $0.kind == "video" }
            let dropped = video.reduce(0) { $0 + $1.framesOverBudget + $1.framesQueueFull }
            let fpsMin = video.map(\.fps).min()
            let output = view?.outputs.first
            let outputFps = gauges.first("cohost_output_video_fps", room: name)
            let voices = streams.filter { $0.kind == "audio" }.count
            var realTime =
                dropped == 0 && voices == members.count && video.count == (plan.audioOnly ? 0 : members.count)
            if let output, output.state != "connected" { realTime = false }
            if let fpsMin, Double(fpsMin) < 0.9 * Double(plan.video.fps) { realTime = false }
            if output != nil, let canvasFps = view?.canvas.fps, !plan.audioOnly {
                if (outputFps ?? 0) < 0.9 * Double(canvasFps) { realTime = false }
            }
            let n = Double(max(members.count, 1))
            let joins = members.map(\.joinMs).sorted()
            return Room(
                name: name, participants: members.count,
                joinMsMedian: joins.isEmpty ? 0 : joins[joins.count / 2], joinMsMax: joins.last ?? 0,
                sentPacketsPerSecond: Double(members.reduce(0) { $0 + $1.sent.audioPackets + $1.sent.videoPackets })
                    / n / seconds,
                sentKbps: Double(members.reduce(0) { $0 + $1.sent.bytes }) * 8 / 1000 / n / seconds,
                serverVideoFpsMin: fpsMin,
                serverAudioKbps: streams.filter { $0.kind == "audio" }.reduce(0) { $0 + $1.kbps },
                serverLost: streams.reduce(0) { $0 + max($1.lost, 0) },
                serverUnderruns: streams.reduce(0) { $0 + $1.underruns },
                serverFramesDropped: dropped,
                returnAudioPacketsPerSecond: Double(members.reduce(0) { $0 + $1.received.audioPackets }) / n / seconds,
                returnVideoFps: Double(members.reduce(0) { $0 + $1.received.videoFrames }) / n / seconds,
                returnRTCPPerSecond: Double(members.reduce(0) { $0 + $1.received.rtcpPackets }) / n / seconds,
                forwardedPacketsPerSecond: Double(members.reduce(0) { $0 + $1.received.forwardedPackets }) / n
                    / seconds,
                forwardedKbps: Double(members.reduce(0) { $0 + $1.received.forwardedBytes }) * 8 / 1000 / n / seconds,
                outputState: output?.state, outputKbps: output?.kbps, outputVideoFps: outputFps, realTime: realTime)
        }
    }

    /// The table a person reads.
    public var text: String {
        func f(_ v: Double, _ digits: Int = 0) -> String { String(format: "%.\(digits)f", v) }
        var table = Table([
            "ROOM", "USERS", "JOIN ms (median/max)", "SENT pkt/s", "SERVER video fps (min)", "LOST", "DROPPED",
            "BACK audio pkt/s", "BACK view fps", "SLOTS pkt/s kb/s", "OUTPUT", "REAL TIME",
        ])
        for room in rooms {
            let output =
                room.outputState.map { state in
                    "\(state) \(room.outputKbps ?? 0) kb/s" + (room.outputVideoFps.map { " \(f($0)) fps" } ?? "")
                } ?? "-"
            table.add([
                room.name, "\(room.participants)", "\(f(room.joinMsMedian))/\(f(room.joinMsMax))",
                f(room.sentPacketsPerSecond), room.serverVideoFpsMin.map(String.init) ?? "-", "\(room.serverLost)",
                "\(room.serverFramesDropped)", f(room.returnAudioPacketsPerSecond, 1), f(room.returnVideoFps, 1),
                room.forwardedPacketsPerSecond > 0
                    ? "\(f(room.forwardedPacketsPerSecond)) \(f(room.forwardedKbps))" : "-",
                output, room.realTime ? "yes" : "NO",
            ])
        }
        var lines = [table.render()]
        let held = rooms.filter(\.realTime).count
        lines.append(
            "\(participants) participants in \(rooms.count) rooms held \(f(heldSeconds, 1)) s; "
                + "\(held) of \(rooms.count) rooms in real time")
        if let clockSkippedTicks, let udpDropped {
            lines.append("server: \(clockSkippedTicks) mixing ticks skipped, \(udpDropped) datagrams dropped")
        } else if let metricsNote {
            lines.append("server: \(metricsNote)")
        }
        return lines.joined(separator: "\n")
    }
}

/// The samples of Prometheus's text format that the report reads: name, labels, value.
struct PrometheusText {
    var name: String
    var labels: [String: String]
    var value: Double

    static func parse(_ text: String) -> [PrometheusText] {
        text.split(whereSeparator: \.isNewline).compactMap { line -> PrometheusText? in
            guard !line.hasPrefix("#"), let space = line.lastIndex(of: " "),
                let value = Double(line[line.index(after: space)...])
            else { return nil }
            let head = line[..<space]
            guard let brace = head.firstIndex(of: "{") else {
                return PrometheusText(name: String(head), labels: [:], value: value)
            }
            var labels: [String: String] = [:]
            let body = head[head.index(after: brace)...].dropLast()
            for pair in body.split(separator: ",") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2 else { continue }
                labels[String(parts[0])] = String(parts[1].dropFirst().dropLast())
            }
            return PrometheusText(name: String(head[..<brace]), labels: labels, value: value)
        }
    }
}

extension [PrometheusText] {
    func sum(_ name: String) -> Double { filter { $0.name == name }.reduce(0) { $0 + $1.value } }
    func first(_ name: String, room: String) -> Double? {
        first { $0.name == name && $0.labels["room"] == room }?.value
    }
}
