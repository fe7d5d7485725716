import Foundation
import Testing
import TestSupport

extension EndToEnd {
    /// rtmps://: Debian's librtmp speaks TLS (GnuTLS), so an output can publish through a TLS listener.
    /// nginx's stream module terminates TLS in front of nginx-rtmp here, as a CDN's rtmps ingest would.
    @Suite struct SecureOutputTests {
        @Test func anRtmpsOutputConnectsThroughTLSAndItsProgrammeShowsTheParticipant() async throws {
            let nginx = try NginxRTMP(tls: true)
            defer { nginx.stop() }
            let tlsURL = try #require(nginx.tlsURL(stream: "secure"))
            let cohost = try CohostHarness()
            let room = "secure"
            let admin = cohost.token(room: room, user: "producer", admin: true)
            let ids = try createRoomWithOutputs(
                cohost, admin: admin,
                body: #"""
                    {"name":"\#(room)","canvas":{"width":320,"height":180,"fps":15,"background":"#000000"},
                     "video":{"bitrate":400,"keyint":1},
                     "layout":{"mode":"custom","regions":[{"userId":"alice","x":0,"y":0,"width":320,"height":180}]},
                     "outputs":[{"url":"\#(tlsURL)"}]}
                    """#)
            try joinRoom(cohost, room: room, user: "alice", audioSSRC: 6100, videoSSRC: 6101)
            let sender = try startFFmpegParticipant(
                rtpPort: cohost.rtpPort, colour: "blue", toneHz: 660,
                audioSSRC: 6100, videoSSRC: 6101)
            defer { sender.terminate() }

            let connected = await eventually(seconds: 10) {
                outputState(cohost, room: room, admin: admin, id: ids[0]) == "connected"
            }
            #expect(connected, "rtmps output: \(outputState(cohost, room: room, admin: admin, id: ids[0]) ?? "?")")
            // Her pictures on the canvas for a while before pulling (an ffmpeg start can take seconds under load).
            _ = await eventually(seconds: 15) {
                framesDecoded(cohost, room: room, admin: admin, user: "alice", kind: "video") > 15
            }
            // What went in over TLS comes out of the plain RTMP side of the same nginx.
            let pulled = try pullProgramme(url: nginx.url(stream: "secure"), seconds: 2)
            defer { try? FileManager.default.removeItem(atPath: pulled) }
            let rgb = try decodeFirstVideoFrameRGB(path: pulled, width: 320, height: 180, seekSeconds: 0.5)
            expectColour(rgb, width: 320, x: 160, y: 90, (0, 0, 255), "alice through rtmps")
        }

        func outputState(_ cohost: CohostHarness, room: String, admin: String, id: String) -> String? {
            guard let body = try? cohost.call("GET", "/v1/rooms/\(room)", token: admin).body,
                let json = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
                let outputs = json["outputs"] as? [[String: Any]]
            else { return nil }
            return outputs.first { $0["id"] as? String == id }?["state"] as? String
        }
    }
}
