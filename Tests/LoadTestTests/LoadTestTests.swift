import Codecs
import CohostAPI
import Foundation
import Media
import RTP
import Testing
import TestSupport

@testable import LoadTest

/// The load tester's parts: the pre-encoded clip, a participant's offer and answer, the pacer's packets on the wire,
/// and the report's reading of the server's numbers.
@Suite struct LoadTestTests {
    static func answer(port: Int, host: String = "127.0.0.1", audioPT: Int = 111, videoPT: Int = 96) -> String {
        "v=0\r\no=- 1 1 IN IP4 \(host)\r\ns=-\r\nc=IN IP4 \(host)\r\nt=0 0\r\n"
            + "m=audio \(port) RTP/AVP \(audioPT)\r\na=rtpmap:\(audioPT) opus/48000/2\r\na=ssrc:9001\r\na=sendrecv\r\n"
            + "m=video \(port) RTP/AVP \(videoPT)\r\na=rtpmap:\(videoPT) VP8/90000\r\na=ssrc:9002\r\na=sendrecv\r\n"
    }

    @Test func theClipIsAToneAndAVP8LoopThatStartsWithAKeyframe() throws {
        let clip = try SyntheticClip(video: (width: 160, height: 96, fps: 10, kbps: 200), videoSeconds: 2)
        #expect(clip.audio.count == 50)
        #expect(clip.video.count == 20)
        // VP8's frame tag: bit 0 is 0 on a keyframe (RFC 6386 §9.1).
        #expect(clip.video[0][0] & 1 == 0)
        #expect(clip.video.dropFirst().allSatisfy { $0[0] & 1 == 1 })
        let decoder = try VP8Decoder()
        var picture = VideoFrame(width: 2, height: 2)
        for frame in clip.video { #expect(try decoder.decode(frame, into: &picture)) }
        #expect(picture.width == 160 && picture.height == 96)

        let opus = try OpusDecoder(channels: 1)
        var pcm: [Float] = []
        var all: [Float] = []
        for packet in clip.audio {
            _ = try opus.decode(packet, into: &pcm)
            all += pcm
        }
        #expect(all.count == 48_000)
        // The tone, after the decoder's start-up.
        let tail = Array(all[9_600...])
        let tone = Goertzel.power(samples: tail, sampleRate: 48_000, frequency: SyntheticClip.toneHz)
        let off = Goertzel.power(samples: tail, sampleRate: 48_000, frequency: 1_000)
        #expect(tone > 100 * off)
    }

    @Test func anAudioOnlyClipHasNoVideo() throws {
        let clip = try SyntheticClip(video: nil)
        #expect(clip.video.isEmpty && clip.fps == 0 && clip.audio.count == 50)
    }

    @Test func theOfferListsEachLineWithItsSSRCAndDirection() throws {
        let sender = try LoadParticipant(room: "r", user: "u1", ssrcBase: 4000, sendsVideo: true, receives: false)
        #expect(
            sender.offer
                == "v=0\r\no=- 4000 1 IN IP4 0.0.0.0\r\ns=cohost load-test\r\nc=IN IP4 0.0.0.0\r\nt=0 0\r\n"
                + "m=audio 9 RTP/AVP 111\r\na=rtpmap:111 opus/48000/2\r\na=ssrc:4000\r\na=sendonly\r\n"
                + "m=video 9 RTP/AVP 96\r\na=rtpmap:96 VP8/90000\r\na=ssrc:4001\r\na=sendonly\r\n")
        let voice = try LoadParticipant(room: "r", user: "u2", ssrcBase: 4004, sendsVideo: false, receives: true)
        #expect(
            voice.offer
                == "v=0\r\no=- 4004 1 IN IP4 0.0.0.0\r\ns=cohost load-test\r\nc=IN IP4 0.0.0.0\r\nt=0 0\r\n"
                + "m=audio 9 RTP/AVP 111\r\na=rtpmap:111 opus/48000/2\r\na=ssrc:4004\r\na=sendrecv\r\n")
    }

    @Test func theAnswerGivesTheMediaAddressAndTheReturnPayloadTypes() throws {
        let p = try LoadParticipant(room: "r", user: "u1", ssrcBase: 4000, sendsVideo: true, receives: true)
        try p.accept(
            answer: Self.answer(port: 7882, host: "0.0.0.0", audioPT: 109, videoPT: 100), fallbackHost: "127.0.0.2")
        #expect(UInt16(bigEndian: p.server.sin_port) == 7882)
        #expect(p.server.sin_addr.s_addr == inet_addr("127.0.0.2"))
        #expect(p.returnAudioPT == 109 && p.returnVideoPT == 100)
        try p.accept(answer: Self.answer(port: 7000, host: "127.0.0.3"), fallbackHost: "127.0.0.2")
        #expect(p.server.sin_addr.s_addr == inet_addr("127.0.0.3"))

        #expect(throws: LoadTestError.self) {
            try p.accept(answer: Self.answer(port: 7882, host: "::1"), fallbackHost: "::1")
        }
        #expect(throws: LoadTestError.self) { try p.accept(answer: "v=0\r\n", fallbackHost: "127.0.0.1") }
    }

    @Test func whatComesBackIsCountedAsRTCPMixMinusOrViewFrames() throws {
        let p = try LoadParticipant(room: "r", user: "u1", ssrcBase: 4000, sendsVideo: true, receives: true)
        try p.accept(answer: Self.answer(port: 7882), fallbackHost: "127.0.0.1")
        var packet: [UInt8] = []
        func feed(_ bytes: [UInt8]) { bytes.withUnsafeBytes { p.count($0) } }
        RTPPacket.write(
            payloadType: 111, marker: false, sequenceNumber: 1, timestamp: 0, ssrc: 9001, payload: [1, 2, 3],
            into: &packet)
        feed(packet)
        for marker in [false, false, true] {
            RTPPacket.write(
                payloadType: 96, marker: marker, sequenceNumber: 2, timestamp: 0, ssrc: 9002, payload: [0x90],
                into: &packet)
            feed(packet)
        }
        // A receiver report (PT 201) with no blocks, and a PLI (PT 206).
        feed([0x80, 201, 0, 1, 0, 0, 0x23, 0x29])
        feed([0x81, 206, 0, 2, 0, 0, 0x23, 0x29, 0, 0, 0x0F, 0xA1])
        feed([0x80, 111])  // too short: not counted
        #expect(p.received.audioPackets == 1)
        #expect(p.received.videoPackets == 3 && p.received.videoFrames == 1)
        #expect(p.received.rtcpPackets == 2)
        #expect(p.received.bytes == 15 + 3 * 13 + 8 + 12)
    }

    @Test func thePacerSendsNumberedOpusAndVP8PacketsThatTheServerSideCanReassemble() throws {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(fd) }
        #expect(Loopback.bind(fd, port: 0))
        var timeout = timeval(tv_sec: 0, tv_usec: 300_000)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var size: Int32 = 4 << 20
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        let port = try #require(Loopback.localPort(fd))

        let clip = try SyntheticClip(video: (width: 160, height: 96, fps: 10, kbps: 200), videoSeconds: 1)
        let p = try LoadParticipant(room: "r", user: "u1", ssrcBase: 4000, sendsVideo: true, receives: false)
        try p.accept(answer: Self.answer(port: port), fallbackHost: "127.0.0.1")
        let pacer = MediaPacer(clip: clip)
        pacer.add(p)
        usleep(400_000)
        pacer.stop()

        var audio: [RTPPacket] = []
        var video: [RTPPacket] = []
        var buffer = [UInt8](repeating: 0, count: 2048)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { break }
            let packet = try RTPPacket(bytes: Array(buffer[0..<n]))
            if packet.ssrc == 4000 { audio.append(packet) } else { video.append(packet) }
        }
        // Loopback loses nothing: what the pacer counted is what arrived.
        #expect(audio.count == p.sent.audioPackets && video.count == p.sent.videoPackets)
        #expect(audio.count >= 5 && p.sent.videoFrames >= 2 && p.sent.errors == 0)
        #expect(audio.allSatisfy { $0.payloadType == 111 && !$0.marker })
        for (a, b) in zip(audio, audio.dropFirst()) {
            #expect(b.sequenceNumber == a.sequenceNumber &+ 1 && b.timestamp == a.timestamp &+ 960)
        }
        #expect(audio.map(\.payload) == Array(clip.audio.prefix(audio.count)))

        // The frames reassemble from their packets, in order, with 9000 ticks (10 fps) between them.
        var depacketizer = VP8Depacketizer()
        var frames: [(timestamp: UInt32, data: [UInt8])] = []
        for (i, packet) in video.enumerated() {
            if i > 0 { #expect(packet.sequenceNumber == video[i - 1].sequenceNumber &+ 1) }
            #expect(packet.ssrc == 4001 && packet.payloadType == 96)
            if let frame = depacketizer.push(packet, afterLoss: false) {
                frames.append((frame.rtpTimestamp, frame.data))
            }
        }
        #expect(frames.count == p.sent.videoFrames)
        #expect(frames.map(\.data) == Array(clip.video.prefix(frames.count)))
        for (a, b) in zip(frames, frames.dropFirst()) { #expect(b.timestamp == a.timestamp &+ 9000) }
    }

    @Test func theReportReadsTheServersStreamsAndMetrics() throws {
        var plan = LoadTestPlan()
        plan.participantsPerRoom = 2
        plan.video.fps = 30
        let a = try LoadParticipant(room: "load-1", user: "u1", ssrcBase: 10, sendsVideo: true, receives: true)
        let b = try LoadParticipant(room: "load-1", user: "u2", ssrcBase: 20, sendsVideo: true, receives: true)
        a.joinMs = 12
        b.joinMs = 30
        a.sent.audioPackets = 500
        a.sent.videoPackets = 500
        a.sent.bytes = 1_250_000
        a.received.audioPackets = 400
        a.received.videoFrames = 200
        func stream(_ kind: String, fps: Int, kbps: Int, lost: Int, overBudget: Int = 0) -> StreamReport {
            StreamReport(
                kind: kind, codec: kind == "video" ? "VP8" : "opus", ssrc: 1, packets: 100, bytes: 10_000, lost: lost,
                framesDecoded: 100, decodeErrors: 0, fps: fps, kbps: kbps, jitterMs: 1, nacksSent: 0,
                keyframeRequests: 0, concealedMs: 0, retransmissions: 0, roundTripMs: nil, lipSyncDelayMs: 0,
                underruns: 1, trimmedMs: 0, pictureBuffersReplaced: 0, voiceMarginMs: nil,
                framesOverBudget: overBudget)
        }
        /// The server's own type, encoded as the server encodes it.
        func room(videoFps: Int, overBudget: Int) throws -> Data {
            let participant = RoomInfo.ParticipantInfo(
                userId: "p", joinedAt: "2026-01-01T00:00:00Z", muted: false, gain: 1, admin: false, level: 0,
                streams: [
                    stream("audio", fps: 0, kbps: 32, lost: 2),
                    stream("video", fps: videoFps, kbps: 800, lost: -1, overBudget: overBudget),
                ], returns: [])
            var output = OutputInfo(
                id: "o1", url: "rtmp://127.0.0.1/live/x", state: "connected", interleave: "lowLatency",
                queueLimitMs: 2000, maxRetries: nil)
            output.kbps = 2400
            let info = RoomInfo(
                name: "load-1", audioOnly: false, maxParticipants: 16,
                canvas: .init(
                    width: 1280, height: 720, fps: 30, background: "#000000", placeholder: "#202020", holdMs: 1000,
                    backgroundImage: nil, placeholderImage: nil),
                video: nil, audio: .init(bitrate: 64, channels: 1), layout: .grid, anchor: nil, pipAnchor: nil,
                activeSpeaker: nil, watermark: nil, participants: [participant, participant], outputs: [output],
                statusIntervalMs: 3000, maxIngestBitrate: 2500, maxVideoSize: .init(width: 1920, height: 1080),
                returnVideo: .none)
            return try JSONEncoder().encode(info)
        }
        let metrics = """
            # TYPE cohost_clock_skipped_ticks gauge
            cohost_clock_skipped_ticks 3
            cohost_udp_dropped{reason="malformed"} 1
            cohost_udp_dropped{reason="srtp"} 4
            cohost_output_video_fps{room="load-1",output="o1"} 29.5
            cohost_output_video_fps{room="load-2",output="o1"} 3
            """
        let held = try LoadReport(
            plan: plan, rooms: ["load-1"], participants: [a, b],
            serverRooms: ["load-1": try room(videoFps: 28, overBudget: 0)],
            metrics: metrics, heldSeconds: 10)
        let r = try #require(held.rooms.first)
        #expect(r.joinMsMedian == 30 && r.joinMsMax == 30)
        #expect(r.sentPacketsPerSecond == 50 && r.sentKbps == 500)
        #expect(r.serverVideoFpsMin == 28 && r.serverAudioKbps == 64 && r.serverLost == 4 && r.serverUnderruns == 4)
        #expect(r.returnAudioPacketsPerSecond == 20 && r.returnVideoFps == 10)
        #expect(r.outputState == "connected" && r.outputKbps == 2400 && r.outputVideoFps == 29.5)
        #expect(r.realTime)
        #expect(held.clockSkippedTicks == 3 && held.udpDropped == 5)

        let slow = try LoadReport(
            plan: plan, rooms: ["load-1"], participants: [a, b],
            serverRooms: ["load-1": try room(videoFps: 20, overBudget: 0)],
            metrics: nil, heldSeconds: 10)
        #expect(slow.rooms.first?.realTime == false && slow.clockSkippedTicks == nil && slow.metricsNote != nil)
        let dropping = try LoadReport(
            plan: plan, rooms: ["load-1"], participants: [a, b],
            serverRooms: ["load-1": try room(videoFps: 30, overBudget: 3)],
            metrics: metrics, heldSeconds: 10)
        #expect(dropping.rooms.first?.realTime == false && dropping.rooms.first?.serverFramesDropped == 6)
    }
}
