import Foundation
import Media
import Testing
import TestSupport

extension EndToEnd {
    /// A guest's own camera and microphone recorded as received, through the real server: started by the API, the
    /// file read back by ffprobe and ffmpeg, ended by DELETE and by the guest leaving, with the events of each.
    @Suite struct ParticipantRecordingTests {
        static let green = YUVColor(r: 40, g: 200, b: 40)

        static func events(_ recorder: EventRecorder, _ type: String) -> [[String: Any]] {
            recorder.messages.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
                .filter { $0["type"] as? String == type }
        }

        @Test func aGuestsCameraAndVoiceAreRecordedAsReceivedUntilStoppedAndUntilTheyLeave() async throws {
            let cohost = try CohostHarness()
            let room = "taped"
            let admin = cohost.token(room: room, user: "producer", admin: true)
            #expect(
                try cohost.call("POST", "/v1/rooms", token: admin, body: Data(#"{"name":"taped"}"#.utf8)).status == 201)
            let recorder = EventRecorder(
                url: "ws://127.0.0.1:\(cohost.httpPort)/v1/rooms/\(room)/events?token=\(admin)")
            recorder.start()
            defer { recorder.stop() }
            try await recorder.waitUntilConnected()

            let ann = try ConferenceClient(serverPort: cohost.rtpPort, audioSSRC: 81_000, toneHz: 440)
            ann.sendVideo(width: 320, height: 240, fps: 30, bitrateKbps: 800) { frame, _ in frame.fill(Self.green) }
            let offer = ann.offer(direction: "sendrecv", video: .vp8, videoDirection: "sendonly")
            let joined = try cohost.call(
                "POST", "/v1/rooms/\(room)/participants", token: cohost.token(room: room, user: "ann"),
                body: Data(offer.utf8), contentType: "application/sdp")
            #expect(joined.status == 201)
            _ = try ann.accept(answer: String(decoding: joined.body, as: UTF8.self))
            ann.start()
            defer { ann.stop() }

            // Refusals first: nobody of that name, a bad source, a participant token.
            func start(_ body: String, token: String? = nil) throws -> (status: Int, json: [String: Any]) {
                let answer = try cohost.call(
                    "POST", "/v1/rooms/\(room)/recordings", token: token ?? admin, body: Data(body.utf8))
                return (answer.status, (try? JSONSerialization.jsonObject(with: answer.body)) as? [String: Any] ?? [:])
            }
            #expect(try start(#"{"userId":"bob"}"#).status == 404)
            #expect(try start(#"{"userId":"ann","source":"voice"}"#).status == 400)
            #expect(try start(#"{"userId":"ann","source":"screen"}"#).status == 409, "ann shares no screen")
            #expect(try start(#"{"userId":"ann"}"#, token: cohost.token(room: room, user: "ann")).status == 403)

            let first = try start(#"{"userId":"ann","source":"camera"}"#)
            #expect(first.status == 201)
            let file = try #require(first.json["file"] as? String)
            let id = try #require(first.json["id"] as? String)
            #expect(file.hasSuffix(".webm") && first.json["videoCodec"] as? String == "vp8")
            #expect(try start(#"{"userId":"ann"}"#).status == 409, "one recording of a camera at a time")
            let path = FileManager.default.temporaryDirectory.path + "/" + file
            defer { try? FileManager.default.removeItem(atPath: path) }
            // Three seconds of frames written, then stopped: the answer comes once the file is closed.
            #expect(
                await eventually(seconds: 15, every: .milliseconds(100)) {
                    let list = (try? cohost.call("GET", "/v1/rooms/\(room)/recordings", token: admin).body) ?? Data()
                    let entry =
                        ((try? JSONSerialization.jsonObject(with: list)) as? [String: Any])?["recordings"]
                        as? [[String: Any]]
                    return (entry?.first?["videoFrames"] as? Int ?? 0) >= 90
                })
            #expect(try cohost.call("DELETE", "/v1/rooms/\(room)/recordings/\(id)", token: admin).status == 204)
            #expect(try cohost.call("DELETE", "/v1/rooms/\(room)/recordings/\(id)", token: admin).status == 404)
            #expect(await eventually(seconds: 5) { !Self.events(recorder, "recording_stopped").isEmpty })
            let stopped = try #require(Self.events(recorder, "recording_stopped").first)
            #expect(stopped["reason"] as? String == "stopped" && stopped["file"] as? String == file)
            #expect((stopped["durationMs"] as? Int ?? 0) >= 2900)
            #expect(Self.events(recorder, "recording_started").first?["recording"] as? String == id)

            let probe = try run(
                "ffprobe",
                [
                    "-v", "error", "-count_packets", "-show_entries", "stream=codec_name,width,height,nb_read_packets",
                    "-of", "csv=p=0", path,
                ], timeout: 15)
            let streams = String(decoding: probe.stdout, as: UTF8.self).split(whereSeparator: \.isNewline)
            #expect(streams.count == 2 && streams[0].hasPrefix("vp8,320,240,") && streams[1].hasPrefix("opus,"))
            let rgb = try decodeFirstVideoFrameRGB(path: path, width: 32, height: 24)
            let green = stride(from: 1, to: rgb.count, by: 3).map { Int(rgb[$0]) }.reduce(0, +) / (32 * 24)
            #expect(green > 150, "the camera's green: \(green)")
            let pcm = Array(try decodeAudioS16Mono(url: path, seconds: 2.5).dropFirst(24_000))
            #expect(
                Goertzel.power(samples: pcm, sampleRate: 48_000, frequency: 440)
                    > 100 * Goertzel.power(samples: pcm, sampleRate: 48_000, frequency: 1000))

            // A second recording ends when ann leaves.
            let second = try start(#"{"userId":"ann"}"#)
            #expect(second.status == 201)
            let secondPath = FileManager.default.temporaryDirectory.path + "/" + (second.json["file"] as? String ?? "")
            defer { try? FileManager.default.removeItem(atPath: secondPath) }
            #expect(
                try cohost.call(
                    "DELETE", "/v1/rooms/\(room)/participants/ann", token: cohost.token(room: room, user: "ann")
                )
                .status == 204)
            #expect(
                await eventually(seconds: 10) {
                    Self.events(recorder, "recording_stopped").contains { $0["reason"] as? String == "left" }
                })
            let list = try cohost.call("GET", "/v1/rooms/\(room)/recordings", token: admin).body
            #expect(String(decoding: list, as: UTF8.self) == #"{"recordings":[]}"#)
        }
    }
}
