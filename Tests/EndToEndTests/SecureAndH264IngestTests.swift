import Foundation
import Testing
import TestSupport

extension EndToEnd {
    /// Ingest beyond plain VP8: an SRTP (SDES) participant whose tile forged plain RTP cannot touch, and an
    /// H.264 (packetization-mode 1) participant mixed next to a VP8 one. Real ffmpeg senders, real cohost,
    /// a real nginx-rtmp; the programme is pulled back and its pixels and tones checked.
    @Suite struct SecureAndH264IngestTests {
        /// 640×360 canvas at 15 fps: small and slow enough for two cores running every process at once.
        static let canvas = (width: 640, height: 360)
        static let background = (128, 128, 128)
        static let suite = "AES_CM_128_HMAC_SHA1_80"

        @Test func srtpParticipantIsSeenAndHeardAndForgedPlainRTPCannotTouchItsTile() async throws {
            // Real VP8 bytes of a red keyframe, captured before anything else runs: what a forger would send.
            let forged = try Self.captureVP8Packets(colour: "red")
            #expect(!forged.isEmpty)

            let nginx = try NginxRTMP()
            defer { nginx.stop() }
            let cohost = try CohostHarness()
            let room = "secure1"
            let admin = cohost.token(room: room, user: "producer", admin: true)
            try createRoom(
                cohost, admin: admin, name: room, output: nginx.url(stream: room),
                regions: [("sam", 0, 0)])

            var rng = SystemRandomNumberGenerator()
            let masterKey = (0..<30).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let key = Data(masterKey).base64EncodedString()
            let audioSSRC: UInt32 = 51_001, videoSSRC: UInt32 = 51_002, firstVideoSeq = 20_000
            let joined = try cohost.call(
                "POST", "/v1/rooms/\(room)/participants", token: cohost.token(room: room, user: "sam"),
                body: Data(Self.srtpOffer(audioSSRC: audioSSRC, videoSSRC: videoSSRC, key: key).utf8),
                contentType: "application/sdp")
            #expect(joined.status == 201, "\(String(decoding: joined.body, as: UTF8.self))")
            let answer = String(decoding: joined.body, as: UTF8.self)
            #expect(answer.contains("m=audio \(cohost.rtpPort) RTP/SAVP 111\r\n"), "\(answer)")
            #expect(answer.contains("m=video \(cohost.rtpPort) RTP/SAVP 96\r\n"), "\(answer)")
            let serverKeys = Self.answerKeys(answer)
            #expect(serverKeys.count == 2, "one a=crypto per accepted line: \(answer)")
            for serverKey in serverKeys {
                let bytes = Data(base64Encoded: serverKey).map { [UInt8]($0) }
                #expect(bytes?.count == 30, "the answer's key \(serverKey) is not a 30-byte key+salt")
                #expect(bytes != masterKey, "the answer echoed our key instead of its own")
            }

            let sender = try Self.startSRTPParticipant(
                rtpPort: cohost.rtpPort, colour: "lime", toneHz: 700, key: key,
                audioSSRC: audioSSRC, videoSSRC: videoSSRC, videoSeq: firstVideoSeq)
            defer { sender.terminate() }
            _ = await eventually(seconds: 15) {
                let s = (try? cohost.streams(admin: admin, room: room, user: "sam")) ?? [:]
                return ["audio", "video"].allSatisfy {
                    (s[$0]?["framesDecoded"] as? Int ?? 0) > 10 && (s[$0]?["packets"] as? Int ?? 0) > 20
                }
            }

            let before = try cohost.streams(admin: admin, room: room, user: "sam")
            for kind in ["audio", "video"] {
                let s = before[kind] ?? [:]
                #expect((s["packets"] as? Int ?? 0) > 20, "\(kind) before injection: \(s)")
                #expect((s["framesDecoded"] as? Int ?? 0) > 10, "\(kind) before injection: \(s)")
                #expect(s["decodeErrors"] as? Int == 0, "\(kind) before injection: \(s)")
            }
            let srtpDroppedBefore = try Self.gauge(cohost, #"cohost_udp_dropped{reason="srtp"}"#)
            // ffmpeg's own SRTP and SRTCP all authenticate: nothing legitimate is counted as an SRTP failure.
            #expect(
                srtpDroppedBefore == 0, "SRTP failures before any injection:\n\(cohost.process.output.suffix(2000))")

            // Seen and heard: lime in sam's region, grey elsewhere, and sam's 700 Hz tone.
            let first = try pullProgramme(url: nginx.url(stream: room), seconds: 3)
            defer { try? FileManager.default.removeItem(atPath: first) }
            let rgb = try decodeFirstVideoFrameRGB(
                path: first, width: Self.canvas.width, height: Self.canvas.height, seekSeconds: 1.5)
            expectColour(rgb, width: Self.canvas.width, x: 160, y: 90, (0, 255, 0), "sam's region")
            expectColour(rgb, width: Self.canvas.width, x: 480, y: 270, Self.background, "background")
            let pcm = try decodeAudioS16Mono(url: first, seconds: 2.5).map { Float($0) / 32768 }
            let on = Goertzel.power(samples: pcm, sampleRate: 48_000, frequency: 700)
            let off = Goertzel.power(samples: pcm, sampleRate: 48_000, frequency: 250)
            #expect(on > 20 * off, "sam's 700 Hz tone: power \(on) vs off-tone \(off)")

            // Forgery while sam streams, from fresh sockets: the red keyframe as plain RTP at sam's video SSRC with
            // sequence numbers just ahead of ffmpeg's, plain RTP with garbage payloads at both of sam's SSRCs, and
            // random garbage. Every RTP-shaped datagram naming sam's SSRCs must fail SRTP, each counted once.
            let sentSoFar = before["video"]?["packets"] as? Int ?? 0
            var datagrams: [[UInt8]] = []
            for ahead in [1, 3, 10, 40, 200] {
                for (i, packet) in forged.enumerated() {
                    datagrams.append(
                        Self.rewrite(
                            packet, ssrc: videoSSRC,
                            sequence: UInt16(truncatingIfNeeded: firstVideoSeq + sentSoFar + ahead + i)))
                }
            }
            for i in 0..<100 {
                let payload = (0..<Int.random(in: 1...1100, using: &rng)).map { _ in
                    UInt8.random(in: 0...255, using: &rng)
                }
                let header = Self.rtpHeader(
                    payloadType: i % 2 == 0 ? 96 : 111, marker: i % 3 == 0,
                    sequence: UInt16(truncatingIfNeeded: firstVideoSeq + sentSoFar + i),
                    timestamp: UInt32.random(in: 0...UInt32.max, using: &rng),
                    ssrc: i % 2 == 0 ? videoSSRC : audioSSRC)
                datagrams.append(header + payload)
            }
            let aimed = datagrams.count
            for _ in 0..<100 {
                // Random bytes: dropped as malformed or unknown SSRC (naming sam's SSRCs by chance: ~1 in 2^31).
                datagrams.append(
                    (0..<Int.random(in: 0...1400, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) })
            }
            #expect(datagrams.prefix(aimed).allSatisfy { Self.namesKnownRTP($0, ssrcs: [audioSSRC, videoSSRC]) })
            for _ in 0..<3 {
                sendDatagrams(datagrams, toPort: cohost.rtpPort)
                sendDatagrams(datagrams, toPort: cohost.rtpPort + 1)
                try await Task.sleep(for: .milliseconds(300))
            }
            try await Task.sleep(for: .milliseconds(500))

            // The tile is still lime in a programme pulled after the injection, and no forged byte reached a decoder.
            let second = try pullProgramme(url: nginx.url(stream: room), seconds: 2)
            defer { try? FileManager.default.removeItem(atPath: second) }
            let rgbAfter = try decodeFirstVideoFrameRGB(
                path: second, width: Self.canvas.width, height: Self.canvas.height, seekSeconds: 1.0)
            expectColour(
                rgbAfter, width: Self.canvas.width, x: 160, y: 90, (0, 255, 0), "sam's region after the forgery")
            let after = try cohost.streams(admin: admin, room: room, user: "sam")
            for kind in ["audio", "video"] {
                #expect(after[kind]?["decodeErrors"] as? Int == 0, "\(kind) after injection: \(after[kind] ?? [:])")
            }
            #expect((after["video"]?["framesDecoded"] as? Int ?? 0) > (before["video"]?["framesDecoded"] as? Int ?? 0))
            let srtpDroppedAfter = try Self.gauge(cohost, #"cohost_udp_dropped{reason="srtp"}"#)
            // Sent three times to each of the two ports; ffmpeg's own packets added nothing before, and add nothing now.
            #expect(
                srtpDroppedAfter - srtpDroppedBefore == Double(aimed * 6),
                "srtp drops went \(srtpDroppedBefore) → \(srtpDroppedAfter) for \(aimed * 6) forged packets")

            // Control: the same forged bytes, as the first packets of a plain RTP participant, are decodable
            // VP8 (one frame per packet) — so above it was SRTP, not the bytes, that kept them out.
            let plain = try cohost.call(
                "POST", "/v1/rooms/\(room)/participants", token: cohost.token(room: room, user: "pat"),
                body: Data(CohostHarness.offer(audioSSRC: 52_001, videoSSRC: 52_002).utf8),
                contentType: "application/sdp")
            #expect(plain.status == 201)
            sendDatagrams(
                (0..<5).flatMap { round in
                    forged.enumerated().map {
                        Self.rewrite($1, ssrc: 52_002, sequence: UInt16(100 + round * forged.count + $0))
                    }
                }, toPort: cohost.rtpPort)
            try await Task.sleep(for: .milliseconds(500))
            let pat = try cohost.streams(admin: admin, room: room, user: "pat")["video"] ?? [:]
            #expect(pat["framesDecoded"] as? Int == 5 * forged.count, "\(pat)")
            #expect(pat["decodeErrors"] as? Int == 0, "\(pat)")
        }

        @Test func h264ParticipantIsSeenAtItsRegionNextToAVP8One() async throws {
            let nginx = try NginxRTMP()
            defer { nginx.stop() }
            let cohost = try CohostHarness()
            let room = "avc1"
            let admin = cohost.token(room: room, user: "producer", admin: true)
            try createRoom(
                cohost, admin: admin, name: room, output: nginx.url(stream: room),
                regions: [("vera", 0, 0), ("hank", 320, 0)])

            let vera = try cohost.call(
                "POST", "/v1/rooms/\(room)/participants", token: cohost.token(room: room, user: "vera"),
                body: Data(CohostHarness.offer(audioSSRC: 61_001, videoSSRC: 61_002).utf8),
                contentType: "application/sdp")
            #expect(vera.status == 201)
            let hankSSRC: UInt32 = 62_002
            let offer = CohostHarness.h264Offer(ssrc: hankSSRC)
            let hank = try cohost.call(
                "POST", "/v1/rooms/\(room)/participants", token: cohost.token(room: room, user: "hank"),
                body: Data(offer.utf8), contentType: "application/sdp")
            #expect(hank.status == 201, "\(String(decoding: hank.body, as: UTF8.self))")
            let answer = String(decoding: hank.body, as: UTF8.self)
            #expect(answer.contains("m=video \(cohost.rtpPort) RTP/AVP 102\r\n"), "\(answer)")
            #expect(answer.contains("a=rtpmap:102 H264/90000\r\n"), "\(answer)")
            #expect(answer.contains("a=fmtp:102 packetization-mode=1\r\n"), "\(answer)")

            var senders: [ManagedProcess] = []
            defer { senders.forEach { $0.terminate() } }
            senders.append(
                try startFFmpegParticipant(
                    rtpPort: cohost.rtpPort, colour: "red", toneHz: 400,
                    audioSSRC: 61_001, videoSSRC: 61_002))
            senders.append(try Self.startH264Participant(rtpPort: cohost.rtpPort, colour: "yellow", ssrc: hankSSRC))
            _ = await eventually(seconds: 15) {
                ((try? cohost.streams(admin: admin, room: room, user: "hank"))?["video"]?["framesDecoded"] as? Int ?? 0)
                    > 10
            }

            let hankStreams = try cohost.streams(admin: admin, room: room, user: "hank")
            let video = hankStreams["video"] ?? [:]
            #expect(hankStreams.keys.sorted() == ["video"], "\(hankStreams)")
            #expect(video["codec"] as? String == "H264", "\(video)")
            #expect((video["framesDecoded"] as? Int ?? 0) > 10, "\(video)\n\(cohost.process.output.suffix(2000))")
            #expect(video["decodeErrors"] as? Int == 0, "\(video)")
            // The keyframes (a busy test pattern) exceed 1200 bytes, so they arrived as FU-A fragments: more packets than frames.
            #expect((video["packets"] as? Int ?? 0) > (video["framesDecoded"] as? Int ?? 0), "\(video)")
            #expect(try cohost.streams(admin: admin, room: room, user: "vera")["video"]?["codec"] as? String == "VP8")

            let pulled = try pullProgramme(url: nginx.url(stream: room), seconds: 3)
            defer { try? FileManager.default.removeItem(atPath: pulled) }
            let rgb = try decodeFirstVideoFrameRGB(
                path: pulled, width: Self.canvas.width, height: Self.canvas.height, seekSeconds: 1.5)
            expectColour(rgb, width: Self.canvas.width, x: 160, y: 90, (255, 0, 0), "vera's (VP8) region")
            expectColour(rgb, width: Self.canvas.width, x: 480, y: 90, (255, 255, 0), "hank's (H.264) region")
            expectColour(rgb, width: Self.canvas.width, x: 320, y: 270, Self.background, "background")
        }

        // MARK: - Room and API helpers

        func createRoom(
            _ cohost: CohostHarness, admin: String, name: String, output: String,
            regions: [(user: String, x: Int, y: Int)]
        ) throws {
            let list = regions.map { r in #"{"userId":"\#(r.user)","x":\#(r.x),"y":\#(r.y),"width":320,"height":180}"# }
                .joined(separator: ",")
            let body = #"""
                {"name":"\#(name)","canvas":{"width":\#(Self.canvas.width),"height":\#(Self.canvas.height),"fps":15,"background":"#808080"},
                 "video":{"bitrate":800,"keyint":1},"layout":{"mode":"custom","regions":[\#(list)]},
                 "outputs":[{"url":"\#(output)"}]}
                """#
            let created = try cohost.call("POST", "/v1/rooms", token: admin, body: Data(body.utf8))
            #expect(created.status == 201, "\(String(decoding: created.body, as: UTF8.self))")
        }

        /// The stream reports of one participant from `GET /v1/rooms/{room}`, by kind.
        static func gauge(_ cohost: CohostHarness, _ series: String) throws -> Double {
            let text = String(decoding: try cohost.call("GET", "/metrics", token: nil).body, as: UTF8.self)
            let line = text.split(separator: "\n").first { $0.hasPrefix(series + " ") }
            return line.flatMap { $0.split(separator: " ").last }.flatMap { Double($0) } ?? 0
        }
    }
}

// MARK: - Senders and packets

extension EndToEnd.SecureAndH264IngestTests {
    static func srtpOffer(audioSSRC: UInt32, videoSSRC: UInt32, key: String) -> String {
        """
        v=0\r
        o=- 1 1 IN IP4 127.0.0.1\r
        s=-\r
        c=IN IP4 127.0.0.1\r
        t=0 0\r
        m=audio 9 RTP/SAVP 111\r
        a=rtpmap:111 opus/48000/2\r
        a=crypto:1 \(suite) inline:\(key)\r
        a=ssrc:\(audioSSRC)\r
        a=sendonly\r
        m=video 9 RTP/SAVP 96\r
        a=rtpmap:96 VP8/90000\r
        a=crypto:1 \(suite) inline:\(key)\r
        a=ssrc:\(videoSSRC)\r
        a=sendonly\r

        """
    }

    /// The base64 key of every `a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:` line of an answer (lifetime/MKI cut off).
    static func answerKeys(_ answer: String) -> [String] {
        let prefix = "a=crypto:1 \(suite) inline:"
        return answer.split(separator: "\r\n").filter { $0.hasPrefix(prefix) }.map { line in
            String(line.dropFirst(prefix.count).prefix { $0 != "|" && $0 != " " })
        }
    }

    /// Like `startFFmpegParticipant`, but every output is SRTP under `key` (base64 master key + salt).
    static func startSRTPParticipant(
        rtpPort: Int, colour: String, toneHz: Int, key: String,
        audioSSRC: UInt32, videoSSRC: UInt32, videoSeq: Int
    ) throws -> ManagedProcess {
        let p = try FFmpegSender(
            audio: "sine=frequency=\(toneHz):sample_rate=48000",
            video: "color=c=\(colour):s=320x180:r=15", audioSSRC: audioSSRC, videoSSRC: videoSSRC,
            port: rtpPort, outputOptions: ["-srtp_out_suite", suite, "-srtp_out_params", key],
            scheme: "srtp", videoOptions: ["-seq", "\(videoSeq)"]
        ).start()
        return p
    }

    /// libx264 over RTP (packetization-mode 1, ffmpeg's default). The picture is `colour` with a busy
    /// test pattern in its top-left corner, so keyframes are larger than a packet and go out as FU-A
    /// fragments, while the middle of the picture stays a solid colour to check.
    static func startH264Participant(rtpPort: Int, colour: String, ssrc: UInt32) throws -> ManagedProcess {
        let source = "color=c=\(colour):s=640x360:r=15[bg];testsrc2=s=240x136:r=15[t];[bg][t]overlay=0:0"
        let args = [
            "-hide_banner", "-loglevel", "error", "-re", "-f", "lavfi", "-i", source,
            "-c:v", "libx264", "-preset", "veryfast", "-tune", "zerolatency", "-profile:v", "baseline",
            "-pix_fmt", "yuv420p", "-g", "15", "-x264-params", "keyint=15",
            "-payload_type", "102", "-ssrc", "\(ssrc)", "-f", "rtp", "rtp://127.0.0.1:\(rtpPort)?pkt_size=1200",
        ]
        let p = ManagedProcess(executable: "ffmpeg", arguments: args, captureOutput: true)
        try p.start()
        return p
    }

    /// Real VP8 RTP packets (payload type 96) of two frames of a solid colour, the first a keyframe:
    /// ffmpeg sends them to a loopback port pair bound here.
    static func captureVP8Packets(colour: String) throws -> [[UInt8]] {
        let port = try UDPPortPair.find()
        let rtp = try boundSocket(port: port), rtcp = try boundSocket(port: port + 1)
        defer {
            close(rtp)
            close(rtcp)
        }
        let result = try run(
            "ffmpeg",
            [
                "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "color=c=\(colour):s=320x180:r=15",
                "-frames:v", "2", "-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "8",
                "-b:v", "200k", "-g", "15", "-ssrc", "1", "-payload_type", "96",
                "-f", "rtp", "rtp://127.0.0.1:\(port)?pkt_size=1200",
            ], timeout: 15)
        guard result.status == 0 else { throw HarnessError("ffmpeg VP8 capture failed: \(result.stderr)") }
        var packets: [[UInt8]] = []
        var buffer = [UInt8](repeating: 0, count: 2048)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(rtp, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { break }
            let datagram = Array(buffer.prefix(n))
            if n > 12, datagram[1] & 0x7F == 96 { packets.append(datagram) }
        }
        return packets
    }

    /// A UDP socket bound to 127.0.0.1:`port` whose reads give up after 300 ms.
    static func boundSocket(port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw HarnessError("socket() failed") }
        guard Loopback.bind(fd, port: port) else {
            close(fd)
            throw HarnessError("cannot bind UDP 127.0.0.1:\(port)")
        }
        var timeout = timeval(tv_sec: 0, tv_usec: 300_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return fd
    }

    /// `packet` with its sequence number and SSRC replaced.
    static func rewrite(_ packet: [UInt8], ssrc: UInt32, sequence: UInt16) -> [UInt8] {
        var p = packet
        p.replaceSubrange(2..<4, with: [UInt8(sequence >> 8), UInt8(sequence & 0xFF)])
        p.replaceSubrange(8..<12, with: bigEndian(ssrc))
        return p
    }

    /// A 12-byte RTP header (version 2, no padding, extension or CSRCs).
    static func rtpHeader(
        payloadType: UInt8, marker: Bool, sequence: UInt16, timestamp: UInt32, ssrc: UInt32
    ) -> [UInt8] {
        [0x80, (marker ? 0x80 : 0) | payloadType, UInt8(sequence >> 8), UInt8(sequence & 0xFF)]
            + bigEndian(timestamp) + bigEndian(ssrc)
    }

    static func bigEndian(_ v: UInt32) -> [UInt8] {
        [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)]
    }

    /// Whether cohost classifies `d` as RTP (RFC 5761 §4) naming one of `ssrcs`: such a datagram reaches the SRTP check.
    static func namesKnownRTP(_ d: [UInt8], ssrcs: [UInt32]) -> Bool {
        guard d.count >= 12, d[0] >> 6 == 2, !(192...223).contains(d[1]) else { return false }
        let ssrc = UInt32(d[8]) << 24 | UInt32(d[9]) << 16 | UInt32(d[10]) << 8 | UInt32(d[11])
        return ssrcs.contains(ssrc)
    }
}
