import Foundation
import RTP
import Testing
import TestSupport

extension EndToEnd {
    /// Simulcast over plain RTP: a sender's three VP8 layers (real libvpx encodes at 160×90, 320×180 and 640×360,
    /// each named by its RID in its first packets), the mixer decoding the one that covers its tile, each slot
    /// taking the one its size and bandwidth allow, and the unneeded ones paused at the sender.
    @Suite struct SimulcastTests {
        static func layers(base: UInt32) -> [ForwardingPeer.Layer] {
            [
                .init(rid: "q", ssrc: base + 1, width: 160, height: 90, kbps: 100),
                .init(rid: "h", ssrc: base + 2, width: 320, height: 180, kbps: 300),
                .init(rid: "f", ssrc: base + 3, width: 640, height: 360, kbps: 900),
            ]
        }

        func json(_ data: Data) -> [String: Any] {
            (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        }

        func participant(_ cohost: CohostHarness, admin: String, room: String, user: String) -> [String: Any] {
            let info = json((try? cohost.call("GET", "/v1/rooms/\(room)", token: admin).body) ?? Data())
            let people = info["participants"] as? [[String: Any]] ?? []
            return people.first { $0["userId"] as? String == user } ?? [:]
        }

        /// The camera layers of `user` as `GET` shows them, by RID.
        func layers(_ cohost: CohostHarness, admin: String, room: String, user: String) -> [String: [String: Any]] {
            let streams = participant(cohost, admin: admin, room: room, user: user)["streams"] as? [[String: Any]] ?? []
            var byRid: [String: [String: Any]] = [:]
            for stream in streams { if let rid = stream["rid"] as? String { byRid[rid] = stream } }
            return byRid
        }

        func mixedLayer(_ cohost: CohostHarness, admin: String, room: String) -> String? {
            layers(cohost, admin: admin, room: room, user: "ann").first { $0.value["mixed"] as? Bool == true }?.key
        }

        func slot(_ cohost: CohostHarness, admin: String, room: String, user: String) -> [String: Any] {
            (participant(cohost, admin: admin, room: room, user: user)["slots"] as? [[String: Any]])?.first ?? [:]
        }

        func join(
            _ cohost: CohostHarness, room: String, user: String, peer: ForwardingPeer, slots: Int
        ) throws -> String {
            let joined = try cohost.call(
                "POST", "/v1/rooms/\(room)/participants", token: cohost.token(room: room, user: user),
                body: Data(peer.offer(slots: slots).utf8), contentType: "application/sdp")
            #expect(joined.status == 201, "\(String(decoding: joined.body, as: UTF8.self))")
            peer.start()
            return String(decoding: joined.body, as: UTF8.self)
        }

        /// Whether the snapshot's pixel at (x, y) of a 640-wide canvas is the magenta placeholder.
        func placeholder(at x: Int, _ y: Int, _ cohost: CohostHarness, admin: String, room: String) throws -> Bool {
            let png = try cohost.call("GET", "/v1/rooms/\(room)/snapshot", token: admin).body
            let rgb = try decodePNGWithFFmpeg([UInt8](png))
            let at = (y * 640 + x) * 3
            guard rgb.count >= at + 3 else { return true }
            return rgb[at] > 200 && rgb[at + 1] < 60 && rgb[at + 2] > 200
        }

        func layersEvents(_ log: SocketLog) -> [[String: Any]] {
            log.messages.map { json(Data($0.utf8)) }.filter { $0["type"] as? String == "layers" }
        }

        @Test func theMixerDecodesTheLayerCoveringItsTilePausesTheOthersAndSwitchesWithoutAGap() async throws {
            let cohost = try CohostHarness()
            let room = "sim"
            let admin = cohost.token(room: room, user: "host", admin: true)
            let full = #"{"mode":"custom","regions":[{"userId":"ann","x":0,"y":0,"width":640,"height":360}]}"#
            let small = #"{"mode":"custom","regions":[{"userId":"ann","x":0,"y":0,"width":160,"height":90}]}"#
            let file = FileManager.default.temporaryDirectory.appendingPathComponent(
                "cohost-simulcast-\(UUID().uuidString).flv"
            ).path
            defer { try? FileManager.default.removeItem(atPath: file) }
            let create = """
                {"name":"\(room)","returnVideo":"none",
                 "canvas":{"width":640,"height":360,"fps":15,"placeholder":"#ff00ff"},"layout":\(full),
                 "outputs":[{"url":"file://\(file)"}]}
                """
            #expect(try cohost.call("POST", "/v1/rooms", token: admin, body: Data(create.utf8)).status == 201)
            let events = SocketLog(url: "ws://127.0.0.1:\(cohost.httpPort)/v1/rooms/\(room)/events?token=\(admin)")
            try await events.waitUntilConnected()
            defer { events.stop() }
            let ann = try ForwardingPeer(serverPort: cohost.rtpPort, ssrc: 0, layers: Self.layers(base: 0x5100_0000))
            defer { ann.stop() }
            let answer = try join(cohost, room: room, user: "ann", peer: ann, slots: 0)
            #expect(answer.contains("a=rid:q recv") && answer.contains("a=simulcast:recv q;h;f"), "\(answer)")
            #expect(answer.contains("a=extmap:10 urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id"), "\(answer)")

            // Every layer arrives, with its size; the full canvas decodes the full-size layer.
            #expect(
                await eventually(seconds: 10) {
                    let l = layers(cohost, admin: admin, room: room, user: "ann")
                    return l["q"]?["width"] as? Int == 160 && l["h"]?["height"] as? Int == 180
                        && l["f"]?["width"] as? Int == 640 && l.values.allSatisfy { $0["state"] as? String == "live" }
                        && mixedLayer(cohost, admin: admin, room: room) == "f"
                }, "\(layers(cohost, admin: admin, room: room, user: "ann"))")
            #expect(
                await eventually(seconds: 5) {
                    (try? placeholder(at: 40, 30, cohost, admin: admin, room: room)) == false
                })

            // A small tile: the quarter-size layer, with no placeholder in the tile on the way.
            #expect(
                try cohost.call("PUT", "/v1/rooms/\(room)/layout", token: admin, body: Data(small.utf8)).status == 200)
            var sawPlaceholder = false
            let switched = await eventually(seconds: 5) {
                if (try? placeholder(at: 12, 10, cohost, admin: admin, room: room)) != false { sawPlaceholder = true }
                return mixedLayer(cohost, admin: admin, room: room) == "q"
            }
            #expect(switched, "\(layers(cohost, admin: admin, room: room, user: "ann"))")
            #expect(!sawPlaceholder)
            let decodedBefore =
                layers(cohost, admin: admin, room: room, user: "ann")["q"]?["framesDecoded"] as? Int ?? 0
            #expect(
                await eventually(seconds: 5) {
                    (layers(cohost, admin: admin, room: room, user: "ann")["q"]?["framesDecoded"] as? Int ?? 0)
                        > decodedBefore + 10
                })

            // Neither the mixer nor any slot takes the larger layers: the sender is asked to pause them.
            #expect(
                await eventually(seconds: 4) {
                    layersEvents(events).contains { ($0["paused"] as? [String])?.sorted() == ["f", "h"] }
                }, "\(events.messages.suffix(5))")
            let paused = try #require(layersEvents(events).last)
            #expect(paused["userId"] as? String == "ann" && paused["source"] as? String == "camera")
            #expect(paused["active"] as? [String] == ["q"])
            ann.setLayer("h", active: false)
            ann.setLayer("f", active: false)
            #expect(
                await eventually(seconds: 5) {
                    layers(cohost, admin: admin, room: room, user: "ann")["f"]?["state"] as? String == "paused"
                })

            // The full canvas again: the full layer is asked back at once and painted from its first picture.
            #expect(
                try cohost.call("PUT", "/v1/rooms/\(room)/layout", token: admin, body: Data(full.utf8)).status == 200)
            #expect(
                await eventually(seconds: 3) {
                    layersEvents(events).last.map { ($0["active"] as? [String])?.contains("f") == true } ?? false
                })
            ann.setLayer("h", active: true)
            ann.setLayer("f", active: true)
            sawPlaceholder = false
            let back = await eventually(seconds: 5) {
                if (try? placeholder(at: 40, 30, cohost, admin: admin, room: room)) != false { sawPlaceholder = true }
                return mixedLayer(cohost, admin: admin, room: room) == "f"
            }
            #expect(back)
            #expect(!sawPlaceholder)

            // Frame by frame, the recorded programme: from Ann's first picture on, a point inside both her tiles is
            // never the placeholder, across the four switches.
            #expect(try cohost.call("DELETE", "/v1/rooms/\(room)", token: admin).status == 204)
            let frames = try decodeVideoFramesRGB(path: file, width: 160, height: 90, fps: 15)
            func magenta(_ rgb: [UInt8]) -> Bool {
                let i = (5 * 160 + 10) * 3
                return rgb[i] > 200 && rgb[i + 1] < 60 && rgb[i + 2] > 200
            }
            // Before Ann joined the tile is the background; then the placeholder until her first picture.
            let joined = frames.firstIndex(where: magenta) ?? 0
            let first = try #require(frames[joined...].firstIndex { !magenta($0) })
            let placeholders = frames[first...].filter(magenta).count
            #expect(frames.count - first > 40, "\(frames.count) frames, Ann's picture from \(first)")
            #expect(
                placeholders == 0,
                "\(placeholders) of \(frames.count - first) frames show the placeholder: \(frames.indices.filter { magenta(frames[$0]) })"
            )
        }

        @Test func eachSlotTakesTheLayerItsSizeAndItsReceiversBandwidthAllow() async throws {
            let cohost = try CohostHarness()
            let room = "simslots"
            let admin = cohost.token(room: room, user: "host", admin: true)
            let create = #"{"name":"\#(room)","returnVideo":"none","canvas":{"width":320,"height":180,"fps":15}}"#
            #expect(try cohost.call("POST", "/v1/rooms", token: admin, body: Data(create.utf8)).status == 201)
            let ann = try ForwardingPeer(serverPort: cohost.rtpPort, ssrc: 0, layers: Self.layers(base: 0x5200_0000))
            let eve = try ForwardingPeer(serverPort: cohost.rtpPort, ssrc: 0x5300_0001, width: 160, height: 96)
            defer { [ann, eve].forEach { $0.stop() } }
            _ = try join(cohost, room: room, user: "ann", peer: ann, slots: 0)
            let eveAnswer = try join(cohost, room: room, user: "eve", peer: eve, slots: 1)
            let slotSSRC = try ForwardingPeer.answerSSRC(eveAnswer, mid: "s1")
            let eveToken = cohost.token(room: room, user: "eve")

            // No size asked and no estimate: the full-size layer.
            #expect(
                await eventually(seconds: 10) {
                    eve.packets(on: slotSSRC).suffix(20).count == 20
                        && eve.packets(on: slotSSRC).suffix(20).allSatisfy { ann.sentLayer($0.payload) == "f" }
                }, "\(slot(cohost, admin: admin, room: room, user: "eve"))")
            #expect(slot(cohost, admin: admin, room: room, user: "eve")["rid"] as? String == "f")
            // (Before the layers' sizes were known, the slot may have started on another.)
            let settled = eve.packets(on: slotSSRC).count - 20

            // A 160×90 tile: the quarter-size layer, from its keyframe on, the numbers running on.
            let sized = #"{"slots":[{"mid":"s1","maxWidth":160,"maxHeight":90}]}"#
            let put = try cohost.call(
                "PUT", "/v1/rooms/\(room)/participants/eve/subscriptions", token: eveToken, body: Data(sized.utf8))
            #expect(put.status == 200, "\(String(decoding: put.body, as: UTF8.self))")
            let chosen = (json(put.body)["chosen"] as? [[String: Any]])?.first
            #expect(chosen?["maxWidth"] as? Int == 160 && chosen?["userId"] == nil)
            #expect(
                await eventually(seconds: 5) {
                    eve.packets(on: slotSSRC).suffix(10).allSatisfy { ann.sentLayer($0.payload) == "q" }
                })
            let all = eve.packets(on: slotSSRC)
            let firstQ = try #require(all.indices.dropFirst(settled).first { ann.sentLayer(all[$0].payload) == "q" })
            #expect(ForwardingTests.startsKeyframe(all[firstQ].payload))
            #expect(all[settled..<firstQ].allSatisfy { ann.sentLayer($0.payload) == "f" })
            for (a, b) in zip(all, all.dropFirst()) { #expect(b.sequence == a.sequence &+ 1) }

            // No size, but Eve can take only 250 kb/s: the quarter layer (100 kb/s) still; 5 Mb/s: the full one.
            let none = #"{"slots":[]}"#
            _ = try cohost.call(
                "PUT", "/v1/rooms/\(room)/participants/eve/subscriptions", token: eveToken, body: Data(none.utf8))
            func remb(_ bps: UInt64) {
                var packet: [UInt8] = []
                ReceiverReport(ssrc: eve.ssrc).append(to: &packet)
                ReceiverEstimatedMaximumBitrate(senderSSRC: eve.ssrc, bitrate: bps, ssrcs: [slotSSRC]).append(
                    to: &packet)
                eve.send(rtcp: packet)
            }
            let low = await eventually(seconds: 5) {
                remb(250_000)
                return slot(cohost, admin: admin, room: room, user: "eve")["rid"] as? String == "q"
                    && slot(cohost, admin: admin, room: room, user: "eve")["nextRid"] == nil
            }
            #expect(low, "\(slot(cohost, admin: admin, room: room, user: "eve"))")
            // The limit goes. Eve estimates as libwebrtc does, from what arrives (1.5 × the last second's rate +
            // 10 kb/s, never more): Cohost has to try a larger layer to learn that it fits, one step at a time.
            let highAt = eve.packets(on: slotSSRC).count
            var lastREMB: UInt64 = 0
            let high = await eventually(seconds: 10) {
                let now = eve.packets(on: slotSSRC).last?.ms ?? 0
                let lastSecond = eve.packets(on: slotSSRC).filter { $0.ms > now - 1000 }
                let bps = UInt64(lastSecond.reduce(0) { $0 + $1.payload.count + 12 } * 8)
                let estimate = bps * 3 / 2 + 10_000
                // A REMB a second, as a browser sends them.
                if now - Int64(lastREMB) >= 1000 {
                    lastREMB = UInt64(now)
                    remb(estimate)
                }
                return eve.packets(on: slotSSRC).dropFirst(highAt).contains { ann.sentLayer($0.payload) == "f" }
            }
            #expect(high, "\(slot(cohost, admin: admin, room: room, user: "eve"))")
            // No freeze across the switches: packets kept coming.
            let arrivals = eve.packets(on: slotSSRC).dropFirst(firstQ).map(\.ms)
            let longest = zip(arrivals, arrivals.dropFirst()).map { $1 - $0 }.max() ?? 0
            #expect(longest < 500, "a gap of \(longest) ms in the slot")
        }
    }
}
