import Foundation
import Testing
import TestSupport

extension EndToEnd {
    /// A voice room: Opus in, audio-only FLV out to a file, closed over the API.
    @Suite struct AudioOnlyRoomTests {
        @Test func anAudioOnlyRoomWritesAudioOnlyFLVWithBothVoicesAndClosesCleanly() async throws {
            let cohost = try CohostHarness()
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("cohost-voice-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: dir) }
            let file = dir.appendingPathComponent("voice.flv").path
            let room = "voice1"
            let admin = cohost.token(room: room, user: "host", admin: true)
            let create =
                #"{"name":"\#(room)","audioOnly":true,"audio":{"bitrate":96,"channels":1},"outputs":[{"url":"file://\#(file)"}]}"#
            #expect(try cohost.call("POST", "/v1/rooms", token: admin, body: Data(create.utf8)).status == 201)

            var senders: [ManagedProcess] = []
            defer { senders.forEach { $0.terminate() } }
            for (i, (user, tone)) in [("ann", 500), ("ben", 1300)].enumerated() {
                // A video line in an audio-only room is answered with port 0; the audio is accepted.
                let joined = try cohost.call(
                    "POST", "/v1/rooms/\(room)/participants", token: cohost.token(room: room, user: user),
                    body: Data(CohostHarness.offer(audioSSRC: UInt32(3000 + i), videoSSRC: UInt32(4000 + i)).utf8),
                    contentType: "application/sdp")
                #expect(joined.status == 201)
                let answer = String(decoding: joined.body, as: UTF8.self)
                #expect(answer.contains("m=video 0 RTP/AVP 96"))
                senders.append(
                    try startFFmpegParticipant(
                        rtpPort: cohost.rtpPort, colour: "", toneHz: tone,
                        audioSSRC: UInt32(3000 + i), videoSSRC: nil))
            }
            // Both voices flowing (however long the ffmpeg starts take), then 3.5 s of them into the file.
            _ = await eventually(seconds: 15) {
                ["ann", "ben"].allSatisfy {
                    framesDecoded(cohost, room: room, admin: admin, user: $0, kind: "audio") > 25
                }
            }
            try await Task.sleep(for: .seconds(3.5))
            #expect(try cohost.call("DELETE", "/v1/rooms/\(room)", token: admin).status == 204)
            #expect(try cohost.call("GET", "/v1/rooms/\(room)", token: admin).status == 404)

            let streams = try ffprobeStreams(url: file)
            // Audio only: one AAC stream, no video; the onVoiceLevels script tags show up as a data stream.
            #expect(streams.filter { $0.type != "data" }.map(\.codec) == ["aac"], "\(streams)")
            #expect(streams.filter { $0.type == "data" }.count == 1, "\(streams)")
            let levels = try FLVProbe.tags(path: file).filter { $0.isScript && !$0.isMetadata }
            #expect(levels.count >= 15, "only \(levels.count) onVoiceLevels tags in the file")
            // The last 3 s of the file: both voices were flowing then, however late they started.
            let pcm = try decodeAudioS16Mono(url: file, seconds: 60).suffix(3 * 48_000).map { Float($0) / 32768 }
            #expect(pcm.count > 48_000 * 2)
            let off = Goertzel.power(samples: pcm, sampleRate: 48_000, frequency: 900)
            for tone in [500.0, 1300.0] {
                #expect(Goertzel.power(samples: pcm, sampleRate: 48_000, frequency: tone) > 20 * off, "tone \(tone)")
            }
        }
    }
}

extension EndToEnd {
    /// A voice room with a picture: an audio-only room given a canvas pushes everyone's card with their name.
    @Suite struct VoiceRoomPictureTests {
        @Test func anAudioOnlyRoomWithACanvasPushesTheCardsOfItsVoices() async throws {
            let nginx = try NginxRTMP()
            defer { nginx.stop() }
            let cohost = try CohostHarness()
            let room = "voicecards"
            let admin = cohost.token(room: room, user: "host", admin: true)
            let create = """
                {"name":"\(room)","audioOnly":true,"canvas":{"width":640,"height":360,"fps":10,"placeholder":"#303030"},
                 "layout":{"mode":"grid","label":"auto"},"outputs":[{"url":"\(nginx.url(stream: room))"}]}
                """
            let created = try cohost.call("POST", "/v1/rooms", token: admin, body: Data(create.utf8))
            #expect(created.status == 201, "\(String(decoding: created.body, as: UTF8.self))")
            var senders: [ManagedProcess] = []
            defer { senders.forEach { $0.terminate() } }
            for (i, user) in ["ann", "ben"].enumerated() {
                let joined = try cohost.call(
                    "POST", "/v1/rooms/\(room)/participants?name=\(user.uppercased())",
                    token: cohost.token(room: room, user: user),
                    body: Data(CohostHarness.offer(audioSSRC: UInt32(5100 + i), videoSSRC: nil).utf8),
                    contentType: "application/sdp")
                #expect(joined.status == 201)
                senders.append(
                    try startFFmpegParticipant(
                        rtpPort: cohost.rtpPort, colour: "", toneHz: 500 + 400 * i, audioSSRC: UInt32(5100 + i),
                        videoSSRC: nil))
            }
            #expect(
                await eventually(seconds: 15) {
                    ["ann", "ben"].allSatisfy {
                        framesDecoded(cohost, room: room, admin: admin, user: $0, kind: "audio") > 25
                    }
                })
            // The pulled programme has a picture of the canvas's size.
            let pulled = try pullProgramme(url: nginx.url(stream: room), seconds: 3)
            let streams = try ffprobeStreams(url: pulled)
            let video = try #require(streams.first { $0.type == "video" }, "\(streams)")
            #expect(video.codec == "h264" && video.width == 640 && video.height == 360, "\(streams)")
            // Two cards side by side: the placeholder with a white name in the middle of each half.
            let png = try cohost.call("GET", "/v1/rooms/\(room)/snapshot", token: admin)
            #expect(png.status == 200)
            let rgb = try decodePNGWithFFmpeg([UInt8](png.body))
            func whiteIn(x: Range<Int>) -> Int {
                var n = 0
                for y in 150..<210 {
                    for x in x {
                        let i = (y * 640 + x) * 3
                        if rgb[i] > 200 && rgb[i + 1] > 200 && rgb[i + 2] > 200 { n += 1 }
                    }
                }
                return n
            }
            #expect(whiteIn(x: 60..<260) > 100 && whiteIn(x: 380..<580) > 100, "\(whiteIn(x: 60..<260))")
            let corner = (20 * 640 + 20) * 3
            #expect(abs(Int(rgb[corner]) - 48) < 10, "the card's colour: \(rgb[corner])")
            let info =
                try JSONSerialization.jsonObject(
                    with: try cohost.call("GET", "/v1/rooms/\(room)", token: admin).body) as? [String: Any]
            #expect(info?["audioOnly"] as? Bool == true && info?["video"] != nil, "\(String(describing: info))")
        }
    }
}
