import Foundation
import Testing
import TestSupport

/// Reads a room's recorded events (an `EventRecorder`) as JSON objects, for the output tests:
/// `output_state` transitions and `output_status` reports of one output, with the server's event time.
struct OutputEventLog {
    let recorder: EventRecorder

    /// Every event so far, decoded; undecodable messages are skipped (the tests assert on what they need).
    var events: [[String: Any]] {
        recorder.messages.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// `output_state` events of `output`: the state, attempt (when sent) and server time.
    func states(of output: String) -> [(state: String, attempt: Int?, time: Date)] {
        events.filter { $0["type"] as? String == "output_state" && $0["output"] as? String == output }
            .compactMap { e in
                guard let state = e["state"] as? String, let time = Self.time(e) else { return nil }
                return (state, e["attempt"] as? Int, time)
            }
    }

    /// `output_status` events of `output`, in arrival order.
    func statuses(of output: String) -> [OutputStatusReport] {
        events.filter { $0["type"] as? String == "output_status" && $0["output"] as? String == output }
            .compactMap(OutputStatusReport.init)
    }

    /// The server time of the first `state` report of `output` at or after `since`.
    func firstTime(of output: String, state: String, since: Date) -> Date? {
        states(of: output).first { $0.state == state && $0.time >= since }?.time
    }

    nonisolated(unsafe) private static let formatter: ISO8601DateFormatter = {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f
    }()

    static func time(_ event: [String: Any]) -> Date? {
        (event["time"] as? String).flatMap { formatter.date(from: $0) }
    }
}

/// One `output_status` event (protocol/events.schema.json).
struct OutputStatusReport: CustomStringConvertible {
    let time: Date
    let videoFps: Double
    let audioFps: Double
    let kbps: Double
    let droppedVideoFrames: Int
    let droppedAudioFrames: Int
    let queueMs: Int
    /// The encoder's current video bitrate in kbps (changes with adaptive bitrate).
    let bitrate: Int?

    init?(_ e: [String: Any]) {
        guard let time = OutputEventLog.time(e), let videoFps = (e["videoFps"] as? NSNumber)?.doubleValue,
            let kbps = (e["kbps"] as? NSNumber)?.doubleValue, let dropped = e["droppedVideoFrames"] as? Int,
            let queueMs = e["queueMs"] as? Int
        else { return nil }
        self.time = time
        self.videoFps = videoFps
        audioFps = (e["audioFps"] as? NSNumber)?.doubleValue ?? 0
        self.kbps = kbps
        droppedVideoFrames = dropped
        droppedAudioFrames = e["droppedAudioFrames"] as? Int ?? 0
        self.queueMs = queueMs
        bitrate = e["bitrate"] as? Int
    }

    var description: String {
        "fps \(videoFps)/\(audioFps) kbps \(kbps) dropped \(droppedVideoFrames)/\(droppedAudioFrames) queue \(queueMs) ms bitrate \(bitrate.map(String.init) ?? "-")"
    }
}

/// Frames decoded so far from `user`'s stream of `kind` ("audio", "video"), from the room's info; 0 while unknown.
/// Tests wait on it instead of sleeping a fixed time for an ffmpeg sender to start and its first keyframe to land.
func framesDecoded(_ cohost: CohostHarness, room: String, admin: String, user: String, kind: String) -> Int {
    guard let body = try? cohost.call("GET", "/v1/rooms/\(room)", token: admin).body,
        let json = try? JSONSerialization.jsonObject(with: body) as? [String: Any]
    else { return 0 }
    let participant = (json["participants"] as? [[String: Any]] ?? []).first { $0["userId"] as? String == user }
    let stream = (participant?["streams"] as? [[String: Any]] ?? []).first { $0["kind"] as? String == kind }
    return stream?["framesDecoded"] as? Int ?? 0
}

/// Creates a room from a JSON body and returns its output ids in the order of `outputs`.
func createRoomWithOutputs(
    _ cohost: CohostHarness, admin: String, body: String,
    sourceLocation: SourceLocation = #_sourceLocation
) throws -> [String] {
    let created = try cohost.call("POST", "/v1/rooms", token: admin, body: Data(body.utf8))
    let text = String(decoding: created.body, as: UTF8.self)
    #expect(created.status == 201, "\(text)", sourceLocation: sourceLocation)
    let json = try JSONSerialization.jsonObject(with: created.body) as? [String: Any]
    let ids = (json?["outputs"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
    guard !ids.isEmpty else { throw HarnessError("room created without outputs: \(text)") }
    return ids
}

/// Joins `user` with a VP8 + Opus offer; the ffmpeg sender is started by the caller.
func joinRoom(
    _ cohost: CohostHarness, room: String, user: String, audioSSRC: UInt32, videoSSRC: UInt32,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let joined = try cohost.call(
        "POST", "/v1/rooms/\(room)/participants", token: cohost.token(room: room, user: user),
        body: Data(CohostHarness.offer(audioSSRC: audioSSRC, videoSSRC: videoSSRC).utf8),
        contentType: "application/sdp")
    #expect(joined.status == 201, "\(String(decoding: joined.body, as: UTF8.self))", sourceLocation: sourceLocation)
}

/// An ffmpeg participant whose picture is fresh random noise every frame (so the room's encoder needs
/// its whole bitrate) and whose sound is a sine tone, as VP8 + Opus over RTP.
func startNoisyParticipant(rtpPort: Int, toneHz: Int, audioSSRC: UInt32, videoSSRC: UInt32) throws -> ManagedProcess {
    try FFmpegSender(
        audio: "sine=frequency=\(toneHz):sample_rate=48000",
        video: "color=c=gray:s=320x180:r=30,noise=alls=80:allf=t+u",
        audioSSRC: audioSSRC, videoSSRC: videoSSRC, port: rtpPort, videoBitrate: "1500k", gop: 30
    ).start()
}

/// The RMS of the quietest 100 ms window of `pcm` (48 kHz mono): near 0 when the sound dropped out.
func quietestWindowRMS(_ pcm: [Float]) -> Float {
    let window = 4800
    guard pcm.count >= window else { return 0 }
    return stride(from: 0, through: pcm.count - window, by: window).map { start in
        (pcm[start..<start + window].reduce(0) { $0 + $1 * $1 } / Float(window)).squareRoot()
    }.min() ?? 0
}
