import Codecs
import Foundation
import Media
import RTP
import Testing
import TestSupport

extension EndToEnd {
    /// Sources in receivers' slots: an RTSP camera's constrained-baseline H.264 forwarded as it is, a clip whose
    /// H.264 has B-frames encoded once for the slots, each decoded by the receiver to its own colour.
    @Suite struct SourceForwardingTests {
        /// The last picture decoded from the packets of one slot (from its first keyframe on), and how many.
        static func lastPicture(_ packets: [ForwardingPeer.Received]) throws -> (VideoFrame, Int) {
            var depacketizer = H264Depacketizer()
            let decoder = try H264Decoder()
            var frame = VideoFrame(width: 2, height: 2)
            var decoded = 0
            var previous: UInt16?
            for packet in packets {
                let rtp = RTPPacket(
                    marker: packet.marker, payloadType: packet.payloadType, sequenceNumber: packet.sequence,
                    timestamp: packet.timestamp, ssrc: packet.ssrc, payload: packet.payload)
                let lost = previous.map { packet.sequence != $0 &+ 1 } ?? false
                previous = packet.sequence
                if let unit = depacketizer.push(rtp, afterLoss: lost) {
                    if (try? decoder.decode(unit.data, into: &frame)) == true { decoded += 1 }
                }
            }
            return (frame, decoded)
        }

        /// The centre's Y, U and V.
        static func centre(_ frame: VideoFrame) -> (Int, Int, Int) {
            let y = Int(frame.y[frame.height / 2 * frame.strideY + frame.width / 2])
            let c = frame.chromaHeight / 2 * frame.strideUV + frame.strideUV / 2
            return (y, Int(frame.u[c]), Int(frame.v[c]))
        }

        static func near(_ a: (Int, Int, Int), _ b: (Int, Int, Int)) -> Bool {
            abs(a.0 - b.0) <= 10 && abs(a.1 - b.1) <= 10 && abs(a.2 - b.2) <= 10
        }

        @Test func aCameraGoesToSlotsAsItIsAndAClipWithBFramesIsEncodedOnceForThem() async throws {
            let folder = try SourceTests.mediaFolder([
                (
                    "clip.mp4",
                    [
                        "-f", "lavfi", "-i", "color=c=blue:s=320x180:r=30:d=3", "-c:v", "libx264", "-profile:v",
                        "high", "-bf", "2", "-g", "60", "-pix_fmt", "yuv420p",
                    ]
                )
            ])
            defer { try? FileManager.default.removeItem(atPath: NSTemporaryDirectory() + folder) }
            let camera = try RTSPCamera(colour: "0xff00ff00", toneHz: 600)
            defer { camera.stop() }
            let cohost = try CohostHarness()
            let room = "srcfwd"
            let admin = cohost.token(room: room, user: "producer", admin: true)
            // Only the camera is on the canvas: the clip is decoded for its slot alone.
            let create = #"""
                {"name":"\#(room)","returnVideo":"none","canvas":{"width":320,"height":180,"fps":15},
                 "layout":{"mode":"custom","regions":[{"userId":"door","x":0,"y":0,"width":160,"height":120}]}}
                """#
            #expect(try cohost.call("POST", "/v1/rooms", token: admin, body: Data(create.utf8)).status == 201)
            #expect(
                try SourceTests.addSource(
                    cohost, room: room, admin: admin, #"{"userId":"door","url":"\#(camera.url)","latencyMs":200}"#)
                    == 201)
            #expect(
                try SourceTests.addSource(
                    cohost, room: room, admin: admin,
                    #"{"userId":"clip","url":"file://\#(folder)/clip.mp4","loop":true,"latencyMs":200}"#) == 201)
            #expect(
                await eventually(seconds: 20) {
                    let listed = SourceTests.sources(cohost, room: room, admin: admin)
                    return listed["door"]?["state"] as? String == "live"
                        && listed["clip"]?["state"] as? String == "live"
                })

            let viewer = try ForwardingPeer(serverPort: cohost.rtpPort, ssrc: 0x5151_0001, width: 160, height: 96)
            defer { viewer.stop() }
            let joined = try cohost.call(
                "POST", "/v1/rooms/\(room)/participants", token: cohost.token(room: room, user: "viewer"),
                body: Data(viewer.offer(slots: 2).utf8), contentType: "application/sdp")
            #expect(joined.status == 201, "\(String(decoding: joined.body, as: UTF8.self))")
            let answer = String(decoding: joined.body, as: UTF8.self)
            viewer.start()
            let put = try cohost.call(
                "PUT", "/v1/rooms/\(room)/participants/viewer/subscriptions",
                token: cohost.token(room: room, user: "viewer"),
                body: Data(
                    #"{"slots":[{"mid":"s1","userId":"door","source":"camera"},{"mid":"s2","userId":"clip","source":"camera"}]}"#
                        .utf8))
            #expect(put.status == 200, "\(String(decoding: put.body, as: UTF8.self))")
            let doorSlot = try ForwardingPeer.answerSSRC(answer, mid: "s1")
            let clipSlot = try ForwardingPeer.answerSSRC(answer, mid: "s2")

            // Each slot decodes to its source's colour: green (Y 145, U 54, V 34), blue (Y 41, U 240, V 110).
            var door = (VideoFrame(width: 2, height: 2), 0)
            var clip = (VideoFrame(width: 2, height: 2), 0)
            let both = await eventually(seconds: 20, every: .milliseconds(250)) {
                door = (try? Self.lastPicture(viewer.packets(on: doorSlot))) ?? door
                clip = (try? Self.lastPicture(viewer.packets(on: clipSlot))) ?? clip
                return door.1 >= 20 && clip.1 >= 20
            }
            #expect(
                both,
                "decoded \(door.1) of \(viewer.packets(on: doorSlot).count) packets from the camera, \(clip.1) of \(viewer.packets(on: clipSlot).count) from the clip; \(SourceTests.sources(cohost, room: room, admin: admin)); \(String(decoding: (try? cohost.call("GET", "/v1/rooms/\(room)", token: admin).body) ?? Data(), as: UTF8.self))"
            )
            #expect(Self.near(Self.centre(door.0), (145, 54, 34)), "\(Self.centre(door.0))")
            #expect(Self.near(Self.centre(clip.0), (41, 240, 110)), "\(Self.centre(clip.0))")
            #expect(clip.0.width == 320 && clip.0.height == 180)
            // H.264 on the slots' payload type for it.
            #expect(viewer.packets(on: doorSlot).allSatisfy { $0.payloadType == 102 })

            let listed = SourceTests.sources(cohost, room: room, admin: admin)
            let doorStats = try #require(listed["door"])
            let clipStats = try #require(listed["clip"])
            #expect((doorStats["framesForwarded"] as? Int ?? 0) >= 20 && doorStats["framesEncoded"] as? Int == 0)
            #expect((clipStats["framesEncoded"] as? Int ?? 0) >= 20 && clipStats["framesForwarded"] as? Int == 0)
            // The clip is on no region: decoded for its slot, not for the canvas (but for its read-ahead of 200 ms,
            // decoded before the room's first tick placed it nowhere).
            #expect(clipStats["picturesShown"] as? Int == 0)
            #expect((clipStats["picturesDecoded"] as? Int ?? 0) <= 10)
            // The room lists what each source offers the slots.
            let info = SourceTests.json(try cohost.call("GET", "/v1/rooms/\(room)", token: admin).body)
            let people = info["participants"] as? [[String: Any]] ?? []
            #expect(people.first { $0["userId"] as? String == "door" }?["sources"] as? [String] == ["camera"])
        }
    }
}
