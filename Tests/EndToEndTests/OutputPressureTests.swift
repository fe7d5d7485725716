import Foundation
import Testing
import TestSupport

extension EndToEnd {
    /// Outputs under pressure: a link slower than the stream, and a destination that stops reading.
    /// The queue must stay bounded, pictures go before sound, the encoder adapts, and one bad
    /// destination never costs another its frames.
    @Suite struct OutputPressureTests {
        static let tone = 500

        @Test func aThrottledLinkKeepsTheQueueBoundedDropsVideoNotAudioAndAdaptsTheBitrate() async throws {
            let nginx = try NginxRTMP()
            defer { nginx.stop() }
            // Captures what reaches it, with arrival times: the ground truth of what the server got, and when.
            let relay = try ThrottledTCPRelay(targetPort: nginx.port, capture: true)
            defer { relay.stop() }
            let cohost = try CohostHarness()
            let room = "squeeze"
            let admin = cohost.token(room: room, user: "producer", admin: true)
            let queueLimitMs = 1000
            let ids = try createRoomWithOutputs(
                cohost, admin: admin,
                body: #"""
                    {"name":"\#(room)","canvas":{"width":640,"height":360,"fps":30,"background":"#000000"},
                     "video":{"bitrate":2000,"keyint":1,"adaptiveBitrate":true,"minBitrate":300},"statusIntervalMs":1000,
                     "layout":{"mode":"custom","regions":[{"userId":"noisy","x":0,"y":0,"width":640,"height":360}]},
                     "outputs":[{"url":"\#(relay.rtmpURL(stream: room))","queueMs":\#(queueLimitMs)}]}
                    """#)
            let output = ids[0]
            let recorder = EventRecorder(
                url: "ws://127.0.0.1:\(cohost.httpPort)/v1/rooms/\(room)/events?token=\(admin)")
            recorder.start()
            defer { recorder.stop() }
            try await recorder.waitUntilConnected()
            let log = OutputEventLog(recorder: recorder)

            try joinRoom(cohost, room: room, user: "noisy", audioSSRC: 6000, videoSSRC: 6001)
            let sender = try startNoisyParticipant(
                rtpPort: cohost.rtpPort, toneHz: Self.tone, audioSSRC: 6000, videoSSRC: 6001)
            defer { sender.terminate() }

            // Unthrottled, the noise needs the whole 2000 kbps: the 600 kbps limit below is a real squeeze.
            _ = await eventually(seconds: 10) { log.statuses(of: output).filter { $0.kbps > 0 }.count >= 3 }
            let baseline = log.statuses(of: output).last
            #expect(
                (baseline?.kbps ?? 0) >= 1500,
                "unthrottled: \(baseline.map(String.init(describing:)) ?? "no output_status")")
            #expect(
                baseline?.bitrate == 2000,
                "unthrottled: \(baseline.map(String.init(describing:)) ?? "no output_status")")

            // Squeeze to 600 kbps and hold it until the encoder fits the link (audio takes ~130 kbps of it).
            relay.bytesPerSecond = 600_000 / 8
            let throttledAt = Date()
            let fits = await eventually(seconds: 20) {
                log.statuses(of: output).contains { $0.time > throttledAt && ($0.bitrate ?? 2000) < 600 }
            }
            let squeezed = log.statuses(of: output).filter { $0.time > throttledAt }
            #expect(fits, "bitrate did not step down below the 600 kbps link within 20 s: \(squeezed)")
            #expect(
                (squeezed.last?.droppedVideoFrames ?? 0) > (baseline?.droppedVideoFrames ?? 0),
                "no video dropped: \(squeezed)")
            // Still squeezed: the programme's sound, as nginx got it, has no silent 100 ms.
            let pulled = try pullProgramme(url: nginx.url(stream: room), seconds: 4)
            let pcm = try decodeAudioS16Mono(url: pulled, seconds: 4).map { Float($0) / 32768 }
            #expect(pcm.count >= 3 * 48_000, "only \(pcm.count) samples pulled while throttled")
            #expect(
                quietestWindowRMS(pcm) > 0.01,
                "a 100 ms window of the squeezed programme has RMS \(quietestWindowRMS(pcm))")

            relay.bytesPerSecond = nil
            let liftedAt = Date()
            let recovered = await eventually(seconds: 25) {
                log.statuses(of: output).contains { $0.time > liftedAt && ($0.bitrate ?? 0) >= 2000 }
            }
            let all = log.statuses(of: output)
            #expect(
                recovered, "bitrate did not come back to 2000 kbps within 25 s: \(all.filter { $0.time > liftedAt })")
            let worstQueue = all.map(\.queueMs).max() ?? 0
            #expect(worstQueue <= queueLimitMs + 250, "queue reached \(worstQueue) ms (limit \(queueLimitMs) ms)")

            // At the wire: no hole in the audio the server got, and the backlog between the programme and the
            // server (queue plus socket buffers) stayed near the queue's bound. The 1.5 s margin covers socket
            // buffers of ~100 KB in all (1.3 s at 600 kbps); an unbounded kernel send buffer shows as tens of seconds.
            let capture = relay.captures.max { $0.bytes.count < $1.bytes.count }
            let tags = try capture.map { try RTMPChunkReader.flvTags(clientBytes: $0.bytes) } ?? []
            #expect(relay.connectionCount == 1, "the output reconnected \(relay.connectionCount - 1) times")
            let audioHole = FLVTimeline.longestGapMs(tags, audio: true)
            #expect(
                audioHole <= 100 && all.last?.droppedAudioFrames == 0,
                "audio at the server has a \(audioHole) ms hole; dropped audio frames: \(all.last?.droppedAudioFrames ?? -1)"
            )
            let lag =
                FLVTimeline.deliveryLagSpreadSeconds(tags) { capture?.arrivalSeconds(ofByteAt: $0.endOffset - 1) }
                ?? .infinity
            #expect(
                lag <= Double(queueLimitMs) / 1000 + 1.5,
                "delivery fell \(lag) s behind the programme (queue limit \(queueLimitMs) ms)")
        }

        @Test func deadDestinationsDoNotCostTheLiveOutputItsFramesOrBitrate() async throws {
            let nginx = try NginxRTMP()
            defer { nginx.stop() }
            // One destination accepts the TCP connection and never reads a byte (the RTMP handshake hangs);
            // at another nothing listens (every connect is refused); a third takes the handshake, the publish
            // and the headers (about 4 KB), then stops reading, so that output's writes block.
            let silent = try ThrottledTCPRelay(targetPort: nginx.port)
            silent.stallAfterBytes = 0
            defer { silent.stop() }
            let hung = try ThrottledTCPRelay(targetPort: nginx.port)
            hung.stallAfterBytes = 16 * 1024
            defer { hung.stop() }
            let nowhere = try FreePort.tcp()
            let cohost = try CohostHarness()
            let room = "split"
            let admin = cohost.token(room: room, user: "producer", admin: true)
            let (fps, bitrate) = (30, 1000)
            let ids = try createRoomWithOutputs(
                cohost, admin: admin,
                body: #"""
                    {"name":"\#(room)","canvas":{"width":640,"height":360,"fps":\#(fps),"background":"#000000"},
                     "video":{"bitrate":\#(bitrate),"keyint":1},"statusIntervalMs":1000,
                     "layout":{"mode":"custom","regions":[{"userId":"noisy","x":0,"y":0,"width":640,"height":360}]},
                     "outputs":[{"url":"\#(nginx.url(stream: "live"))"},{"url":"\#(silent.rtmpURL(stream: "silent"))"},
                                {"url":"rtmp://127.0.0.1:\#(nowhere)/live/nowhere"},{"url":"\#(hung.rtmpURL(stream: "hung"))"}]}
                    """#)
            #expect(ids.count == 4)
            let (live, blocked) = (ids[0], ids[3])
            let recorder = EventRecorder(
                url: "ws://127.0.0.1:\(cohost.httpPort)/v1/rooms/\(room)/events?token=\(admin)")
            recorder.start()
            defer { recorder.stop() }
            try await recorder.waitUntilConnected()
            let log = OutputEventLog(recorder: recorder)

            try joinRoom(cohost, room: room, user: "noisy", audioSSRC: 7000, videoSSRC: 7001)
            let sender = try startNoisyParticipant(
                rtpPort: cohost.rtpPort, toneHz: Self.tone, audioSSRC: 7000, videoSSRC: 7001)
            defer { sender.terminate() }
            let up = await eventually(seconds: 10) { log.states(of: live).last?.state == "connected" }
            #expect(up, "live output: \(log.states(of: live).map(\.state))")
            let connectedAt = Date()
            try await Task.sleep(for: .seconds(2))

            // 5 s of the live output, pulled from nginx: every frame there, in real time.
            let started = Date()
            let pulled = try pullProgramme(url: nginx.url(stream: "live"), seconds: 5)
            let wall = Date().timeIntervalSince(started)
            let tags = try FLVProbe.tags(path: pulled)
            let video = tags.filter { $0.isMedia && $0.isVideo }.map(\.timestampMs)
            // The frame rate over the pictures' own time span (the pull's 5 s also covers audio that starts
            // before the first keyframe), and no stall: a blocked sibling must not hold this output's frames.
            let spanSeconds = Double((video.last ?? 0) - (video.first ?? 0)) / 1000
            #expect(spanSeconds >= 4, "live output: pictures span only \(spanSeconds) s of the 5 s pulled")
            let measuredFps = spanSeconds > 0 ? Double(video.count - 1) / spanSeconds : 0
            #expect(measuredFps >= 0.9 * Double(fps), "live output: \(video.count) frames over \(spanSeconds) s")
            let gap = FLVTimeline.longestGapMs(tags, audio: false)
            #expect(gap <= 250, "live output: a \(gap) ms gap between pictures")
            #expect(wall < 5 + 4, "pulling 5 s of the live output took \(wall) s")

            // Its own reports agree: full frame rate and bitrate, nothing dropped.
            let during = log.statuses(of: live).filter { $0.time > connectedAt.addingTimeInterval(1) }
            #expect(during.count >= 4, "live output_status: \(during)")
            for status in during {
                #expect(status.videoFps >= 0.9 * Double(fps), "live output: \(status)")
                #expect(status.kbps >= 0.8 * Double(bitrate), "live output: \(status)")
                #expect(status.droppedVideoFrames == 0, "live output dropped frames: \(status)")
            }
            // Meanwhile the dead ones were failing, not silently idle, and the blocked one kept its queue
            // within its (default 2 s) bound by dropping video.
            let stuck = log.statuses(of: blocked)
            let bounded = stuck.allSatisfy { $0.queueMs <= 2000 + 250 }
            #expect(bounded && (stuck.last?.droppedVideoFrames ?? 0) > 0, "blocked output: \(stuck)")
            for dead in ids[1...2] {
                #expect(
                    log.states(of: dead).contains { $0.state == "reconnecting" },
                    "output \(dead): \(log.states(of: dead))")
                #expect(
                    !log.states(of: dead).contains { $0.state == "connected" },
                    "output \(dead): \(log.states(of: dead))")
            }
        }
    }
}
