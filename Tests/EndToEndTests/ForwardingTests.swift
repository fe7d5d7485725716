import Foundation
import RTP
import Testing
import TestSupport

extension EndToEnd {
    /// Receive slots over plain RTP: other participants' cameras forwarded as sent, rewritten into one stream per
    /// slot, switched by subscription, NACKs answered from the history, a slow receiver paused, a camera turned off.
    @Suite struct ForwardingTests {
        /// The first packet of a VP8 keyframe as `VP8Packetizer` writes it (4-byte descriptor).
        static func startsKeyframe(_ payload: [UInt8]) -> Bool {
            payload.count > 4 && payload[0] & 0x10 != 0 && payload[0] & 0x07 == 0 && payload[4] & 0x01 == 0
        }

        static func pictureID(_ payload: [UInt8]) -> UInt16 { UInt16(payload[2] & 0x7F) << 8 | UInt16(payload[3]) }

        func json(_ data: Data) -> [String: Any] {
            (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        }

        /// Joins each peer with its own token and `slots` receive slots, and starts it; the answers by user.
        func join(
            _ cohost: CohostHarness, room: String, _ peers: [(String, ForwardingPeer, Int)]
        ) throws
            -> [String: String]
        {
            var answers: [String: String] = [:]
            for (user, peer, slots) in peers {
                let joined = try cohost.call(
                    "POST", "/v1/rooms/\(room)/participants", token: cohost.token(room: room, user: user),
                    body: Data(peer.offer(slots: slots).utf8), contentType: "application/sdp")
                #expect(joined.status == 201, "\(String(decoding: joined.body, as: UTF8.self))")
                answers[user] = String(decoding: joined.body, as: UTF8.self)
                peer.start()
            }
            return answers
        }

        func slotInfo(_ cohost: CohostHarness, admin: String, room: String, user: String) throws -> [String: Any] {
            let info = json(try cohost.call("GET", "/v1/rooms/\(room)", token: admin).body)
            let people = info["participants"] as? [[String: Any]] ?? []
            let slots = people.first { $0["userId"] as? String == user }?["slots"] as? [[String: Any]]
            return slots?.first ?? [:]
        }

        /// Whether Bob's region (160,0 160×90) in the canvas snapshot is the magenta placeholder, near its top-left
        /// corner (his card has his name in the middle).
        func bobsRegionIsPlaceholder(_ cohost: CohostHarness, admin: String, room: String) throws -> Bool {
            let png = try cohost.call("GET", "/v1/rooms/\(room)/snapshot", token: admin).body
            let rgb = try decodePNGWithFFmpeg([UInt8](png))
            let at = (10 * 320 + 172) * 3
            guard rgb.count >= at + 3 else { return false }
            return rgb[at] > 200 && rgb[at + 1] < 60 && rgb[at + 2] > 200
        }

        @Test func slotsForwardOthersAsSentSwitchBySubscriptionAnswerNacksAndPauseForASlowReceiver() async throws {
            let cohost = try CohostHarness()
            let room = "fwd"
            let admin = cohost.token(room: room, user: "host", admin: true)
            // A canvas with a magenta placeholder and each sender in a region of its own.
            let create = """
                {"name":"\(room)","returnVideo":"none",
                 "canvas":{"width":320,"height":180,"fps":15,"placeholder":"#ff00ff"},
                 "layout":{"mode":"custom","regions":[
                   {"userId":"ann","x":0,"y":0,"width":160,"height":90},
                   {"userId":"bob","x":160,"y":0,"width":160,"height":90},
                   {"userId":"eve","x":0,"y":90,"width":160,"height":90}]}}
                """
            #expect(try cohost.call("POST", "/v1/rooms", token: admin, body: Data(create.utf8)).status == 201)
            let ann = try ForwardingPeer(serverPort: cohost.rtpPort, ssrc: 0x1111_0001, bitrateKbps: 300)
            let bob = try ForwardingPeer(serverPort: cohost.rtpPort, ssrc: 0x2222_0002, bitrateKbps: 1500)
            let eve = try ForwardingPeer(serverPort: cohost.rtpPort, ssrc: 0x3333_0003, width: 160, height: 96)
            defer { [ann, bob, eve].forEach { $0.stop() } }
            let answers = try join(cohost, room: room, [("ann", ann, 0), ("bob", bob, 0), ("eve", eve, 1)])
            let eveAnswer = try #require(answers["eve"])
            #expect(eveAnswer.contains("a=sendonly"), "\(eveAnswer)")
            let slot = try ForwardingPeer.answerSSRC(eveAnswer, mid: "s1")

            // Ann joined first: the slot shows her, from one of her keyframes on.
            let flowing = await eventually(seconds: 10) { eve.packets(on: slot).count >= 20 }
            #expect(flowing, "\(eveAnswer)")
            let before = eve.packets(on: slot)
            #expect(before.allSatisfy { ann.sent($0.payload) })
            #expect(Self.startsKeyframe(try #require(before.first).payload))
            let subscriptionsPath = "/v1/rooms/\(room)/participants/eve/subscriptions"
            let current = json(
                try cohost.call("GET", subscriptionsPath, token: cohost.token(room: room, user: "eve")).body)
            #expect((current["slots"] as? [[String: Any]])?.first?["userId"] as? String == "ann")

            // Eve chooses Bob: his keyframe within 500 ms (a PLI to Bob at once), the numbers running on.
            let switchedAt = Date()
            let put = try cohost.call(
                "PUT", subscriptionsPath, token: cohost.token(room: room, user: "eve"),
                body: Data(#"{"slots":[{"mid":"s1","userId":"bob","source":"camera"}]}"#.utf8))
            #expect(put.status == 200, "\(String(decoding: put.body, as: UTF8.self))")
            #expect(await eventually(seconds: 5) { eve.packets(on: slot).contains { bob.sent($0.payload) } })
            let switchMs = Date().timeIntervalSince(switchedAt) * 1000
            #expect(switchMs < 500, "bob's keyframe came \(switchMs) ms after the subscription")
            #expect(await eventually(seconds: 5) { eve.packets(on: slot).filter { bob.sent($0.payload) }.count >= 40 })
            let all = eve.packets(on: slot)
            let firstBob = try #require(all.firstIndex { bob.sent($0.payload) })
            #expect(Self.startsKeyframe(all[firstBob].payload))
            #expect(all[..<firstBob].allSatisfy { ann.sent($0.payload) })
            #expect(all[firstBob...].allSatisfy { bob.sent($0.payload) })
            for (a, b) in zip(all, all.dropFirst()) {
                #expect(b.sequence == a.sequence &+ 1, "gap \(a.sequence) → \(b.sequence)")
            }
            let gap = Int32(bitPattern: all[firstBob].timestamp &- all[firstBob - 1].timestamp)
            #expect(gap > 0 && gap < 90 * 2000, "timestamp step \(gap) at the switch")
            let pictures = all.filter { $0.payload[0] & 0x10 != 0 }.map { Self.pictureID($0.payload) }
            for (a, b) in zip(pictures, pictures.dropFirst()) { #expect(b == (a + 1) & 0x7FFF) }
            #expect(bob.rtcp.contains { if case .pli = $0 { true } else { false } })

            // A NACK from Eve is answered from the history: Bob is not asked.
            let lost = all[firstBob + 10]
            var nack: [UInt8] = []
            ReceiverReport(ssrc: eve.ssrc).append(to: &nack)
            GenericNACK(senderSSRC: eve.ssrc, mediaSSRC: slot, lostSequenceNumbers: [lost.sequence]).append(to: &nack)
            eve.send(rtcp: nack)
            #expect(
                await eventually(seconds: 3) {
                    eve.packets(on: slot).filter { $0.sequence == lost.sequence }.count == 2
                })
            let copies = eve.packets(on: slot).filter { $0.sequence == lost.sequence }
            #expect(copies.map(\.payload) == [lost.payload, lost.payload])
            #expect(copies.map(\.timestamp) == [lost.timestamp, lost.timestamp])
            #expect(!bob.rtcp.contains { if case .nack = $0 { true } else { false } })
            #expect(
                await eventually(seconds: 3) {
                    (try? slotInfo(cohost, admin: admin, room: room, user: "eve"))?["retransmitted"] as? Int == 1
                })

            // Eve says she can take 100 kb/s: Bob's 1.5 Mb/s stops coming.
            #expect(
                await eventually(seconds: 8) {
                    var remb: [UInt8] = []
                    ReceiverReport(ssrc: eve.ssrc).append(to: &remb)
                    ReceiverEstimatedMaximumBitrate(senderSSRC: eve.ssrc, bitrate: 100_000, ssrcs: [slot]).append(
                        to: &remb)
                    eve.send(rtcp: remb)
                    return (try? slotInfo(cohost, admin: admin, room: room, user: "eve"))?["paused"] as? Bool == true
                })
            let pausedInfo = try slotInfo(cohost, admin: admin, room: room, user: "eve")
            #expect(pausedInfo["estimatedBitrate"] as? Int == 100_000)
            let countAtPause = eve.packets(on: slot).count
            try await Task.sleep(for: .seconds(1))
            #expect(eve.packets(on: slot).count == countAtPause)
            let bobKbps = try cohost.streams(admin: admin, room: room, user: "bob")["video"]?["kbps"] as? Int ?? 0
            #expect(bobKbps > 100, "bob sends \(bobKbps) kbit/s")

            // Bob's region shows his picture, not the placeholder.
            #expect(!(try bobsRegionIsPlaceholder(cohost, admin: admin, room: room)))

            // Eve says she can take 5 Mb/s again: Bob's stream comes back.
            var more: [UInt8] = []
            ReceiverReport(ssrc: eve.ssrc).append(to: &more)
            ReceiverEstimatedMaximumBitrate(senderSSRC: eve.ssrc, bitrate: 5_000_000, ssrcs: [slot]).append(to: &more)
            eve.send(rtcp: more)
            #expect(await eventually(seconds: 5) { eve.packets(on: slot).count > countAtPause })

            // Bob turns his camera off (his own token): Eve's slot keeps him (a page shows his tile with a card) but
            // nothing more is forwarded, and his region shows the placeholder.
            let off = try cohost.call(
                "PATCH", "/v1/rooms/\(room)/participants/bob", token: cohost.token(room: room, user: "bob"),
                body: Data(#"{"camera":false}"#.utf8))
            #expect(off.status == 204)
            #expect(
                await eventually(seconds: 3) {
                    (try? bobsRegionIsPlaceholder(cohost, admin: admin, room: room)) == true
                })
            let countAtOff = eve.packets(on: slot).count
            try await Task.sleep(for: .seconds(1))
            #expect(eve.packets(on: slot).count == countAtOff)
            let shown = json(try cohost.call("GET", subscriptionsPath, token: admin).body)
            #expect((shown["slots"] as? [[String: Any]])?.first?["userId"] as? String == "bob")
            let people =
                json(try cohost.call("GET", "/v1/rooms/\(room)", token: admin).body)["participants"]
                as? [[String: Any]] ?? []
            #expect(people.first { $0["userId"] as? String == "bob" }?["camera"] as? Bool == false)
            // Muting is still the admin's.
            let mute = try cohost.call(
                "PATCH", "/v1/rooms/\(room)/participants/bob", token: cohost.token(room: room, user: "bob"),
                body: Data(#"{"muted":true}"#.utf8))
            #expect(mute.status == 403)
        }

        @Test func subscriptionsAreCheckedAndOnlyTheReceiverOrAnAdminMaySetThem() async throws {
            let cohost = try CohostHarness()
            let room = "subs"
            let admin = cohost.token(room: room, user: "host", admin: true)
            let create = #"{"name":"subs","returnVideo":"none"}"#
            #expect(try cohost.call("POST", "/v1/rooms", token: admin, body: Data(create.utf8)).status == 201)
            let eve = try ForwardingPeer(serverPort: cohost.rtpPort, ssrc: 0x4444_0004)
            let joined = try cohost.call(
                "POST", "/v1/rooms/\(room)/participants", token: cohost.token(room: room, user: "eve"),
                body: Data(eve.offer(slots: 2).utf8), contentType: "application/sdp")
            #expect(joined.status == 201)
            let path = "/v1/rooms/\(room)/participants/eve/subscriptions"
            func put(_ body: String, as user: String = "eve") throws -> (Int, String) {
                let r = try cohost.call("PUT", path, token: cohost.token(room: room, user: user), body: Data(body.utf8))
                return (r.status, String(decoding: r.body, as: UTF8.self))
            }
            #expect(try put(#"{"slots":[{"mid":"s9","userId":"ann"}]}"#).0 == 400)
            #expect(try put(#"{"slots":[{"mid":"s1","userId":"ann","source":"mic"}]}"#).0 == 400)
            #expect(try put(#"{"slots":[{"mid":"s1"}]}"#).0 == 400)
            #expect(try put(#"{"slots":[{"mid":"s1","userId":"ann"}]}"#, as: "mallory").0 == 403)
            let twice = try put(#"{"slots":[{"mid":"s1","userId":"ann"},{"mid":"s1","userId":"bob"}]}"#)
            #expect(
                twice.0 == 200 && twice.1.contains(#""chosen":[{"mid":"s1","source":"camera","userId":"bob"}]"#),
                "\(twice.1)")
            let (status, body) = try put(#"{"slots":[{"mid":"s2","userId":"ann","source":"screen"}]}"#)
            #expect(status == 200)
            let chosen = json(Data(body.utf8))["chosen"] as? [[String: Any]]
            #expect(chosen?.count == 1)
            #expect(chosen?.first?["mid"] as? String == "s2")
            #expect(chosen?.first?["source"] as? String == "screen")
            let slots = json(Data(body.utf8))["slots"] as? [[String: Any]]
            #expect(slots?.map { $0["mid"] as? String } == ["s1", "s2"])
        }

        /// A participant's video streams from `GET /v1/rooms/{room}`, by source.
        func videoStreams(
            _ cohost: CohostHarness, admin: String, room: String, user: String
        ) throws
            -> [String: [String: Any]]
        {
            let info = json(try cohost.call("GET", "/v1/rooms/\(room)", token: admin).body)
            let people = info["participants"] as? [[String: Any]] ?? []
            let streams = people.first { $0["userId"] as? String == user }?["streams"] as? [[String: Any]] ?? []
            var out: [String: [String: Any]] = [:]
            for s in streams where s["kind"] as? String == "video" { out[s["source"] as? String ?? "?"] = s }
            return out
        }

        @Test func aScreenShareIsForwardedToSlotsAndDecodedOnlyWhileARegionShowsIt() async throws {
            let cohost = try CohostHarness()
            let room = "share"
            let admin = cohost.token(room: room, user: "host", admin: true)
            let create = """
                {"name":"\(room)","returnVideo":"none","canvas":{"width":320,"height":180,"fps":15},
                 "layout":{"mode":"custom","regions":[{"userId":"ann","x":0,"y":0,"width":160,"height":90}]}}
                """
            #expect(try cohost.call("POST", "/v1/rooms", token: admin, body: Data(create.utf8)).status == 201)
            let ann = try ForwardingPeer(serverPort: cohost.rtpPort, ssrc: 0x5555_0001, screenSSRC: 0x5555_0002)
            let eve = try ForwardingPeer(serverPort: cohost.rtpPort, ssrc: 0x6666_0001, width: 160, height: 96)
            defer { [ann, eve].forEach { $0.stop() } }
            let answers = try join(cohost, room: room, [("ann", ann, 0), ("eve", eve, 2)])
            // Ann's slides line is a stream Cohost receives: answered recvonly, nothing sent back on it.
            let annAnswer = try #require(answers["ann"])
            let screenLine = try #require(annAnswer.components(separatedBy: "m=video ").last)
            #expect(screenLine.contains("a=mid:screen\r\n") && screenLine.contains("a=recvonly\r\n"), "\(annAnswer)")
            let people =
                json(try cohost.call("GET", "/v1/rooms/\(room)", token: admin).body)["participants"]
                as? [[String: Any]] ?? []
            #expect(people.first { $0["userId"] as? String == "ann" }?["sources"] as? [String] == ["camera", "screen"])

            // Eve's two slots get Ann's camera and Ann's screen, as sent.
            let eveAnswer = try #require(answers["eve"])
            let slots = [
                try ForwardingPeer.answerSSRC(eveAnswer, mid: "s1"),
                try ForwardingPeer.answerSSRC(eveAnswer, mid: "s2"),
            ]
            #expect(
                await eventually(seconds: 10) {
                    let got = slots.flatMap { eve.packets(on: $0) }
                    return got.contains { ann.sent($0.payload) } && got.contains { ann.sentScreen($0.payload) }
                })
            // The camera is decoded for its region; the screen, shown in none, is not decoded.
            #expect(
                await eventually(seconds: 5) {
                    ((try? videoStreams(cohost, admin: admin, room: room, user: "ann"))?["camera"]?["framesDecoded"]
                        as? Int ?? 0) > 10
                })
            let before = try videoStreams(cohost, admin: admin, room: room, user: "ann")
            #expect(before["screen"]?["framesDecoded"] as? Int == 0, "\(before)")
            #expect((before["screen"]?["packets"] as? Int ?? 0) > 10, "\(before)")

            // A region for Ann's screen: decoded from the next keyframe, and on the canvas.
            let layout = """
                {"mode":"custom","regions":[{"userId":"ann","x":0,"y":0,"width":160,"height":90},
                 {"userId":"ann","source":"screen","x":160,"y":0,"width":160,"height":90}]}
                """
            #expect(
                try cohost.call("PUT", "/v1/rooms/\(room)/layout", token: admin, body: Data(layout.utf8)).status == 200)
            #expect(
                await eventually(seconds: 5) {
                    ((try? videoStreams(cohost, admin: admin, room: room, user: "ann"))?["screen"]?["framesDecoded"]
                        as? Int ?? 0) > 0
                })
            #expect(
                await eventually(seconds: 5) {
                    guard let png = try? cohost.call("GET", "/v1/rooms/\(room)/snapshot", token: admin).body,
                        let rgb = try? decodePNGWithFFmpeg([UInt8](png))
                    else { return false }
                    let at = (45 * 320 + 240) * 3
                    // Luma 200 with neutral chroma: a light grey.
                    return rgb.count > at + 2 && (rgb[at...(at + 2)]).allSatisfy { (180...235).contains($0) }
                })
        }

        @Test func aMonitorGetsEveryCameraAndIsInNoListLayoutOrEvent() async throws {
            let cohost = try CohostHarness()
            let room = "watch"
            let admin = cohost.token(room: room, user: "producer", admin: true)
            let create = #"{"name":"\#(room)","returnVideo":"none"}"#
            #expect(try cohost.call("POST", "/v1/rooms", token: admin, body: Data(create.utf8)).status == 201)
            let ann = try ForwardingPeer(serverPort: cohost.rtpPort, ssrc: 0x7777_0001, bitrateKbps: 200)
            let bob = try ForwardingPeer(serverPort: cohost.rtpPort, ssrc: 0x7777_0002, bitrateKbps: 200)
            let console = try ForwardingPeer(serverPort: cohost.rtpPort, ssrc: 0x7777_0003, width: 160, height: 96)
            defer { [ann, bob, console].forEach { $0.stop() } }
            _ = try join(cohost, room: room, [("ann", ann, 0), ("bob", bob, 0)])
            // Only an admin may watch unseen.
            let refused = try cohost.call(
                "POST", "/v1/rooms/\(room)/participants?monitor=true", token: cohost.token(room: room, user: "eve"),
                body: Data(console.offer(slots: 2).utf8), contentType: "application/sdp")
            #expect(refused.status == 403)
            let joined = try cohost.call(
                "POST", "/v1/rooms/\(room)/participants?monitor=true", token: admin,
                body: Data(console.offer(slots: 2).utf8), contentType: "application/sdp")
            #expect(joined.status == 201)
            console.start()
            let answer = String(decoding: joined.body, as: UTF8.self)
            let slots = [
                try ForwardingPeer.answerSSRC(answer, mid: "s1"), try ForwardingPeer.answerSSRC(answer, mid: "s2"),
            ]
            #expect(
                await eventually(seconds: 10) {
                    let got = slots.flatMap { console.packets(on: $0) }
                    return got.contains { ann.sent($0.payload) } && got.contains { bob.sent($0.payload) }
                })
            // Not a participant: not listed, not counted, not placed; its own slots are readable.
            let info = json(try cohost.call("GET", "/v1/rooms/\(room)", token: admin).body)
            let users = (info["participants"] as? [[String: Any]] ?? []).compactMap { $0["userId"] as? String }
            #expect(users == ["ann", "bob"])
            let mine = json(
                try cohost.call("GET", "/v1/rooms/\(room)/participants/producer/subscriptions", token: admin).body)
            #expect((mine["slots"] as? [[String: Any]])?.compactMap { $0["userId"] as? String } == ["ann", "bob"])
            // The participants' slots never show the monitor (it sends nothing), and ann's offer had none.
            #expect(ann.packets(on: slots[0]).isEmpty)
        }
    }
}
