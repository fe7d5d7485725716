import Foundation
import Testing
import TestSupport

extension EndToEnd {
    /// A participant behind a bad network (10 % loss, 0–60 ms random delay, hence reordering): the
    /// programme must keep moving, the voice must not drop out, and the server must ask for repairs.
    @Suite struct ImpairedNetworkTests {
        static let placeholder = (48, 48, 48)

        @Test func theProgrammeKeepsMovingAndTheToneStaysContinuousThroughLossJitterAndReordering() async throws {
            let nginx = try NginxRTMP()
            defer { nginx.stop() }
            let cohost = try CohostHarness()
            let room = "lossy"
            let admin = cohost.token(room: room, user: "producer", admin: true)
            let create = #"""
                {"name":"\#(room)","canvas":{"width":640,"height":360,"fps":30,"background":"#000000","placeholder":"#303030"},
                 "video":{"bitrate":1000,"keyint":1},
                 "layout":{"mode":"custom","regions":[{"userId":"mover","x":0,"y":0,"width":640,"height":360}]},
                 "outputs":[{"url":"\#(nginx.url(stream: room))"}]}
                """#
            let created = try cohost.call("POST", "/v1/rooms", token: admin, body: Data(create.utf8))
            #expect(created.status == 201, "\(String(decoding: created.body, as: UTF8.self))")

            let relay = try ImpairedRelay(targetPort: cohost.rtpPort, dropRate: 0.10, maxDelayMs: 60)
            defer { relay.stop() }
            let joined = try cohost.call(
                "POST", "/v1/rooms/\(room)/participants", token: cohost.token(room: room, user: "mover"),
                body: Data(CohostHarness.offer(audioSSRC: 3000, videoSSRC: 3001).utf8),
                contentType: "application/sdp")
            #expect(joined.status == 201)
            // A moving white box, so a frozen tile shows as identical consecutive frames. ffmpeg ignores NACK
            // and PLI, so after a lost packet the tile can only come back at ffmpeg's next keyframe: one-packet
            // frames and a keyframe every 5 frames keep that within what a sender answering PLI would achieve.
            let sender = try FFmpegSender(
                audio: "sine=frequency=600:sample_rate=48000",
                video: "color=c=blue:s=160x90:r=15[bg];color=c=white:s=20x20:r=15[box];"
                    + "[bg][box]overlay=x='mod(t*80\\,140)':y=35:format=yuv420,format=yuv420p[out0]",
                audioSSRC: 3000, videoSSRC: 3001, port: relay.port, videoBitrate: "150k", gop: 5
            ).start()
            defer { sender.terminate() }

            // The first picture must be on the canvas before the pull (with 10 % loss the first keyframe may not be).
            _ = await eventually(seconds: 15) {
                framesDecoded(cohost, room: room, admin: admin, user: "mover", kind: "video") > 15
            }
            let pulled = try pullProgramme(url: nginx.url(stream: room), seconds: 6)

            // Video: sampled at 10 fps, no run of identical frames longer than 1 s, never the placeholder.
            let frames = try decodeVideoFramesRGB(path: pulled, width: 160, height: 90, fps: 10)
            #expect(frames.count >= 50, "only \(frames.count) frames pulled")
            // The pull gets audio at once but video only from the next keyframe (up to keyint, 1 s, later), and the
            // constant-rate decode repeats the first picture back to the audio's start: that opening run is not a
            // freeze, so runs count from the first change on.
            let pairs = Array(zip(frames, frames.dropFirst()))
            let opening = pairs.prefix { meanDifference($0.0, $0.1) < 1.0 }.count
            #expect(opening < 15, "the pulled programme opens with \(opening + 1) identical samples")
            var run = 0, longest = 0
            for (previous, frame) in pairs.dropFirst(opening) {
                run = meanDifference(previous, frame) < 1.0 ? run + 1 : 0
                longest = max(longest, run)
            }
            let placeholders = frames.filter { share(of: Self.placeholder, in: $0) > 0.5 }.count
            #expect(longest < 10, "the picture stood still for \(longest + 1) consecutive samples (10 fps)")
            #expect(placeholders == 0, "\(placeholders) frames showed the placeholder instead of the participant")

            // Audio: no 100 ms window of the pulled programme is silent.
            let pcm = try decodeAudioS16Mono(url: pulled, seconds: 5).map { Float($0) / 32768 }
            let window = 4800
            let quietest =
                stride(from: 0, to: pcm.count - window, by: window).map { start in
                    (pcm[start..<start + window].reduce(0) { $0 + $1 * $1 } / Float(window)).squareRoot()
                }.min() ?? 0
            #expect(pcm.count >= 4 * 48_000)
            #expect(quietest > 0.01, "a 100 ms window of the programme has RMS \(quietest)")

            // The server noticed the damage and asked for repairs, on the wire and in its counters.
            let info = try cohost.call("GET", "/v1/rooms/\(room)", token: admin)
            let json = try JSONSerialization.jsonObject(with: info.body) as? [String: Any]
            let streams = ((json?["participants"] as? [[String: Any]])?.first?["streams"] as? [[String: Any]]) ?? []
            let video = streams.first { $0["kind"] as? String == "video" } ?? [:]
            let audio = streams.first { $0["kind"] as? String == "audio" } ?? [:]
            #expect((video["lost"] as? Int ?? 0) > 0, "\(video)")
            #expect((video["nacksSent"] as? Int ?? 0) > 0, "\(video)")
            #expect((video["keyframeRequests"] as? Int ?? 0) >= 2, "join plus at least one loss: \(video)")
            #expect((audio["concealedMs"] as? Int ?? 0) > 0, "\(audio)")
            #expect(
                relay.dropped > 0 && relay.returned > 0, "relay dropped \(relay.dropped), returned \(relay.returned)")
            let metrics = String(decoding: try cohost.call("GET", "/metrics", token: nil).body, as: UTF8.self)
            #expect(metrics.contains(#"cohost_stream_nacks_sent{"#), "\(metrics.prefix(600))")
            #expect(metrics.contains(#"cohost_stream_concealed_ms{"#), "\(metrics.prefix(600))")
        }

        func meanDifference(_ a: [UInt8], _ b: [UInt8]) -> Double {
            var sum = 0
            for i in a.indices { sum += abs(Int(a[i]) - Int(b[i])) }
            return Double(sum) / Double(a.count)
        }

        func share(of colour: (Int, Int, Int), in rgb: [UInt8]) -> Double {
            var hits = 0
            for i in stride(from: 0, to: rgb.count - 2, by: 3)
            where abs(Int(rgb[i]) - colour.0) < 12 && abs(Int(rgb[i + 1]) - colour.1) < 12
                && abs(Int(rgb[i + 2]) - colour.2) < 12
            {
                hits += 1
            }
            return Double(hits) / Double(rgb.count / 3)
        }
    }
}
