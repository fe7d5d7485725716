import Foundation
import Media
import Testing
import TestSupport

extension EndToEnd {
    /// A guest's own camera and microphone recorded as received, through the real server: started by the API, the
    /// file read back by ffprobe and ffmpeg, ended by DELETE and by the guest leaving, with the events of each.
    @Suite struct ParticipantRecordingTests {
        static let green = YUVColor(r: 40, g: 200, b: 40)

        /// The video frames the room's first recording has written so far (0 without one).
        static func videoFramesRecorded(_ cohost: CohostHarness, room: String, admin: String) -> Int {
            let list = (try? cohost.call("GET", "/v1/rooms/\(room)/recordings", token: admin).body) ?? Data()
            let entries =
                ((try? JSONSerialization.jsonObject(with: list)) as? [String: Any])?["recordings"] as? [[String: Any]]
            return entries?.first?["videoFrames"] as? Int ?? 0
        }

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
                    Self.videoFramesRecorded(cohost, room: room, admin: admin) >= 90
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

        @Test func anH264SendersPicturesAreRecordedByteForByteInMatroska() async throws {
            let directory = NSTemporaryDirectory() + "cohost-rec-h264-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            // An orange clip from ffmpeg's libx264, its parameter sets before each keyframe (one a second).
            let clip = directory + "/orange.h264"
            let rendered = try run(
                "ffmpeg",
                [
                    "-hide_banner", "-loglevel", "error", "-nostdin", "-f", "lavfi", "-i",
                    "color=c=orange:s=320x240:r=30,noise=alls=20:allf=t", "-t", "2", "-c:v", "libx264", "-profile:v",
                    "baseline", "-g", "30", "-pix_fmt", "yuv420p", "-f", "h264", "-y", clip,
                ], timeout: 60)
            #expect(rendered.status == 0, "\(rendered.stderr)")
            let sent = H264Units.nalUnits(annexB: [UInt8](try Data(contentsOf: URL(fileURLWithPath: clip))))

            let cohost = try CohostHarness()
            let room = "taped264"
            let admin = cohost.token(room: room, user: "producer", admin: true)
            #expect(
                try cohost.call("POST", "/v1/rooms", token: admin, body: Data(#"{"name":"taped264"}"#.utf8)).status
                    == 201)
            let joined = try cohost.call(
                "POST", "/v1/rooms/\(room)/participants", token: cohost.token(room: room, user: "cam"),
                body: Data(CohostHarness.h264Offer(ssrc: 82_002).utf8), contentType: "application/sdp")
            #expect(joined.status == 201)
            let sender = try H264ClipSender(clip: clip, ssrc: 82_002, port: cohost.rtpPort)
            sender.start()
            defer { sender.stop() }
            let started = try cohost.call(
                "POST", "/v1/rooms/\(room)/recordings", token: admin, body: Data(#"{"userId":"cam"}"#.utf8))
            #expect(started.status == 201)
            let info = (try? JSONSerialization.jsonObject(with: started.body)) as? [String: Any] ?? [:]
            let file = try #require(info["file"] as? String)
            #expect(
                file.hasSuffix(".mkv") && info["videoCodec"] as? String == "h264" && info["audio"] as? Bool == false)
            let path = FileManager.default.temporaryDirectory.path + "/" + file
            defer { try? FileManager.default.removeItem(atPath: path) }
            #expect(
                await eventually(seconds: 15, every: .milliseconds(100)) {
                    Self.videoFramesRecorded(cohost, room: room, admin: admin) >= 90
                })
            let id = try #require(info["id"] as? String)
            #expect(try cohost.call("DELETE", "/v1/rooms/\(room)/recordings/\(id)", token: admin).status == 204)

            // What the file holds, back in Annex B: every picture's slices are the clip's own bytes, in the clip's
            // order, and there are as many pictures as the sender's 30 a second over the recorded span.
            let annexB = directory + "/recorded.h264"
            let copied = try run(
                "ffmpeg",
                [
                    "-hide_banner", "-loglevel", "error", "-nostdin", "-i", path, "-c", "copy", "-f", "h264", "-y",
                    annexB,
                ],
                timeout: 30)
            #expect(copied.status == 0, "\(copied.stderr)")
            let recorded = H264Units.nalUnits(annexB: [UInt8](try Data(contentsOf: URL(fileURLWithPath: annexB))))
            let slices = recorded.filter { [1, 5].contains(($0.first ?? 0) & 0x1F) }
            let clipSlices = sent.filter { [1, 5].contains(($0.first ?? 0) & 0x1F) }
            #expect(slices.count >= 90)
            #expect((slices.first?.first ?? 0) & 0x1F == 5, "the recording starts at a keyframe")
            let start = try #require(clipSlices.firstIndex(of: slices[0]))
            let inOrder = slices.enumerated().allSatisfy { i, slice in
                clipSlices[(start + i) % clipSlices.count] == slice
            }
            #expect(inOrder, "every recorded slice is the clip's next one, byte for byte")
            // The span the file's own timestamps cover (a file written as it goes has no duration in its header).
            let times = try run(
                "ffprobe",
                ["-v", "error", "-select_streams", "v", "-show_entries", "packet=pts_time", "-of", "csv=p=0", path],
                timeout: 15)
            let stamps = String(decoding: times.stdout, as: UTF8.self).split(whereSeparator: \.isNewline)
                .compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
            let span = (stamps.max() ?? 0) - (stamps.min() ?? 0) + 1.0 / 30
            #expect(abs(Double(slices.count) - span * 30) <= 3, "\(slices.count) pictures over \(span) s")
            let rgb = try decodeFirstVideoFrameRGB(path: path, width: 32, height: 24)
            let mean = (0..<3).map { c in
                stride(from: c, to: rgb.count, by: 3).map { Int(rgb[$0]) }.reduce(0, +) / (32 * 24)
            }
            #expect(mean[0] > 180 && mean[1] > 100 && mean[1] < 200 && mean[2] < 90, "orange: \(mean)")
        }
    }
}
