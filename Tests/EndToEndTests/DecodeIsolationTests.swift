import Foundation
import Testing
import TestSupport

extension EndToEnd {
    /// One participant cannot stall ingest for every room: a 4096×2304 H.264 camera at 40 Mbit/s costs this machine
    /// more than a core to decode, yet another room's participant on the same UDP port loses no packet, because
    /// decoding happens on the decode threads within a budget and the receive thread only parses and routes.
    @Suite struct DecodeIsolationTests {
        static let bigSize = (width: 4096, height: 2304)

        @Test func aHugeH264SenderInOneRoomDropsNoPacketOfAnotherRoomsParticipant() async throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cohost-big-\(UUID())").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let clip = try Self.renderBigClip(directory: directory)

            let cohost = try CohostHarness()
            let admin = { (room: String) in cohost.token(room: room, user: "producer", admin: true) }
            for (room, body) in [
                ("calm", #"{"name":"calm","canvas":{"width":320,"height":180,"fps":15}}"#),
                (
                    "huge",
                    #"{"name":"huge","canvas":{"width":320,"height":180,"fps":15},"maxVideoSize":{"width":4096,"height":2304}}"#
                ),
                ("capped", #"{"name":"capped","canvas":{"width":320,"height":180,"fps":15}}"#),
            ] {
                let created = try cohost.call("POST", "/v1/rooms", token: admin(room), body: Data(body.utf8))
                #expect(created.status == 201, "\(String(decoding: created.body, as: UTF8.self))")
            }
            #expect(
                try cohost.call(
                    "POST", "/v1/rooms", token: admin("over"),
                    body: Data(#"{"name":"over","maxVideoSize":{"width":4096,"height":4096}}"#.utf8)
                ).status == 400)

            let bea = (audio: UInt32(71_001), video: UInt32(71_002))
            try join(
                cohost, room: "calm", user: "bea",
                offer: CohostHarness.offer(audioSSRC: bea.audio, videoSSRC: bea.video))
            try join(cohost, room: "huge", user: "max", offer: CohostHarness.h264Offer(ssrc: 72_002))
            try join(cohost, room: "capped", user: "cap", offer: CohostHarness.h264Offer(ssrc: 73_002))

            let calmSender = try ffmpegParticipant(
                rtpPort: cohost.rtpPort, colour: "teal", toneHz: 500, audioSSRC: bea.audio, videoSSRC: bea.video
            ).prerendered(seconds: 25, directory: directory)
            let calm = try calmSender.start()
            defer { calm.terminate() }
            _ = await eventually(seconds: 15) {
                ((try? cohost.streams(admin: admin("calm"), room: "calm", user: "bea"))?["video"]?[
                    "framesDecoded"]
                    as? Int ?? 0) > 10
            }

            let dropsBefore = try Self.socketDrops(port: cohost.rtpPort)
            let beaBefore = try cohost.streams(admin: admin("calm"), room: "calm", user: "bea")
            let big = try [(72_002, 0), (73_002, 15)].map {
                try H264ClipSender(clip: clip, ssrc: $0.0, port: cohost.rtpPort, firstFrame: $0.1)
            }
            defer { big.forEach { $0.stop() } }
            big.forEach { $0.start() }
            // Long enough for the big senders to spend their decode budgets and for a stalled receive thread to fill
            // the socket's buffer several times over.
            try await Task.sleep(for: .seconds(10))
            let maxStats = try cohost.streams(admin: admin("huge"), room: "huge", user: "max")["video"] ?? [:]
            let capStats = try cohost.streams(admin: admin("capped"), room: "capped", user: "cap")["video"] ?? [:]
            let beaAfter = try cohost.streams(admin: admin("calm"), room: "calm", user: "bea")
            let dropsAfter = try Self.socketDrops(port: cohost.rtpPort)
            big.forEach { $0.stop() }

            // The big senders were there: megabytes a second reached Cohost from each.
            for (name, stats) in [("max", maxStats), ("cap", capStats)] {
                #expect((stats["bytes"] as? Int ?? 0) > 20_000_000, "\(name): \(stats)")
            }
            // max's room allows 4096×2304: decoded on the decode threads until its budget ran out or the decoder fell
            // 16 frames behind, then held to keyframes.
            #expect((maxStats["framesDecoded"] as? Int ?? 0) > 0, "\(maxStats)")
            let heldBack = (maxStats["framesOverBudget"] as? Int ?? 0) + (maxStats["framesQueueFull"] as? Int ?? 0)
            #expect(heldBack > 0, "\(maxStats)")
            #expect(maxStats["framesTooLarge"] as? Int == 0, "\(maxStats)")
            // cap's room has the default bound (1920×1080): nothing of it was decoded.
            #expect(capStats["framesDecoded"] as? Int == 0, "\(capStats)")
            #expect((capStats["framesTooLarge"] as? Int ?? 0) > 0, "\(capStats)")
            #expect(capStats["decodeCpuMs"] as? Int == 0, "\(capStats)")

            // Nothing was dropped: not by the kernel for a full socket buffer, and none of bea's packets went missing.
            #expect(dropsAfter == dropsBefore, "datagrams dropped on the media socket: \(dropsAfter - dropsBefore)")
            for kind in ["audio", "video"] {
                let before = beaBefore[kind] ?? [:], after = beaAfter[kind] ?? [:]
                #expect(after["lost"] as? Int == 0, "bea's \(kind): \(after)")
                #expect(
                    (after["packets"] as? Int ?? 0) > (before["packets"] as? Int ?? 0) + 100, "bea's \(kind): \(after)")
            }
            #expect((beaAfter["video"]?["framesQueueFull"] as? Int) == 0, "\(beaAfter)")
        }

        // MARK: - Helpers

        func join(_ cohost: CohostHarness, room: String, user: String, offer: String) throws {
            let joined = try cohost.call(
                "POST", "/v1/rooms/\(room)/participants", token: cohost.token(room: room, user: user),
                body: Data(offer.utf8), contentType: "application/sdp")
            #expect(joined.status == 201, "\(user): \(String(decoding: joined.body, as: UTF8.self))")
        }

        /// Two seconds of 4096×2304 noise over a test pattern at 30 fps and 40 Mbit/s, CABAC (x264 superfast), a
        /// keyframe a second with its parameter sets in band: a raw H.264 stream `H264ClipSender` loops into RTP.
        static func renderBigClip(directory: String) throws -> String {
            let path = directory + "/big.h264"
            let source = "testsrc2=s=\(bigSize.width)x\(bigSize.height):r=30,noise=alls=40:allf=t"
            let result = try run(
                "ffmpeg",
                [
                    "-hide_banner", "-loglevel", "error", "-nostdin", "-f", "lavfi", "-i", source, "-t", "2",
                    "-c:v", "libx264", "-preset", "superfast", "-b:v", "40M", "-maxrate", "40M", "-bufsize", "40M",
                    "-g", "30", "-profile:v", "high", "-pix_fmt", "yuv420p", "-f", "h264", "-y", path,
                ], timeout: 120)
            guard result.status == 0 else { throw HarnessError("rendering the big clip failed: \(result.stderr)") }
            return path
        }

        /// The kernel's count of datagrams dropped on the UDP socket bound to `port` (the last column of
        /// /proc/net/udp): the receive buffer was full because nobody read it in time.
        static func socketDrops(port: Int) throws -> Int {
            let table = try String(contentsOfFile: "/proc/net/udp", encoding: .utf8)
            let local = String(format: ":%04X", port)
            for line in table.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                guard fields.count > 12, fields[1].hasSuffix(local), let drops = Int(fields[fields.count - 1]) else {
                    continue
                }
                return drops
            }
            throw HarnessError("no UDP socket on port \(port) in /proc/net/udp")
        }
    }
}
