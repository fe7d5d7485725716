import Codecs
import Foundation
import Logging
import Media
import RTP
import Synchronization
import Testing
@testable import Rooms

/// The return audio of a voice room, driven tick by tick with real Opus packets: who gets an encode of their own,
/// who shares the room's, and what goes on the wire.
@Suite struct MixMinusSenderTests {
    /// What the room sent, per user, in order.
    final class Wire: Sendable {
        let sent = Mutex<[String: [[UInt8]]]>([:])
        func record(_ user: String, _ bytes: [UInt8]) { sent.withLock { $0[user, default: []].append(bytes) } }
        func rtp(_ user: String) -> [RTPPacket] {
            sent.withLock { $0[user] ?? [] }.filter { !(192...223).contains($0[1]) }.compactMap {
                try? RTPPacket(bytes: $0)
            }
        }
        func rtcp(_ user: String) -> [[UInt8]] {
            sent.withLock { $0[user] ?? [] }.filter { (192...223).contains($0[1]) }
        }
    }

    let wire = Wire()
    let encoders: [String: OpusEncoder]
    let room: Room
    var people: [String: Participant] = [:]
    static let talkers = ["t1", "t2", "t3"]
    static let listeners = ["l1", "l2", "l3"]

    init() throws {
        let request = #"{"name":"voices","audioOnly":true,"audio":{"bitrate":64,"channels":1}}"#
        let config = try JSONDecoder().decode(RoomConfigRequest.self, from: Data(request.utf8)).resolve()
        let wire = self.wire
        room = try Room(config: config, serverSSRC: 1, logger: Logger(label: "t")) { _, _, _ in
        } sendReturn: { p, _, bytes in
            wire.record(p.userId, bytes)
        }
        var encoders: [String: OpusEncoder] = [:]
        for (i, user) in (Self.talkers + Self.listeners).enumerated() {
            let talks = Self.talkers.contains(user)
            let opus = NegotiatedStream(
                kind: .audio, ssrc: UInt32(100 + i), payloadType: 111, clockRate: 48_000, codec: "opus", srtp: nil)
            let back = ReturnOffer(
                kind: .audio, payloadType: 111, codec: "opus", channels: 1, ssrc: UInt32(900 + i), srtp: nil,
                receiverSSRC: talks ? nil : UInt32(100 + i), receiverSRTP: nil)
            let p = try Participant(
                userId: user, sessionID: i + 1, audio: talks ? opus : nil, video: nil, decodeChannels: 1,
                returnAudio: back, nowMs: 0, logger: Logger(label: "t"))
            _ = try room.add(p)
            people[user] = p
            if talks { encoders[user] = try OpusEncoder(channels: 2, bitrate: 32_000) }
        }
        self.encoders = encoders
    }

    /// Talker `user`'s packet `k`: 20 ms of its own tone (`hz` 0: silence).
    func send(_ k: Int, from user: String, hz: Double) throws {
        let p = try #require(people[user])
        var tone = [Float](repeating: 0, count: AudioFormat.blockFrames * 2)
        for i in 0..<AudioFormat.blockFrames {
            let v = Float(0.3 * sin(2 * Double.pi * hz * Double(k * AudioFormat.blockFrames + i) / 48_000))
            tone[2 * i] = v
            tone[2 * i + 1] = v
        }
        let payload = try #require(encoders[user]).encode(tone)
        p.receive(
            RTPPacket(
                payloadType: 111, sequenceNumber: UInt16(k), timestamp: UInt32(960 * k), ssrc: p.audioSSRC ?? 0,
                payload: payload), bytes: payload.count + 12, nowMs: Int64(20 * k))
    }

    /// Ticks `ticks`, each talker's packet for the tick arriving just before it; `hz(user, tick)` says its tone.
    func run(_ ticks: Range<Int>, hz: (String, Int) -> Double) throws {
        for tick in ticks {
            for user in Self.talkers { try send(tick + 2, from: user, hz: hz(user, tick)) }
            room.queue.sync { room.audioTick(Int64(tick), nowMs: Int64(20 * tick + 40)) }
        }
    }

    @Test func listenersWhoseVoiceIsNotInTheMixShareOneEncodeAndTalkersGetTheirOwn() throws {
        for k in 0..<2 {
            for user in Self.talkers { try send(k, from: user, hz: 500) }
        }
        try run(0..<100) { user, _ in user == "t1" ? 500 : user == "t2" ? 900 : 1300 }
        let encodes = room.returnEncodes
        // One shared encode per block (mono: every listener here is mono), three talkers each with their own.
        #expect(encodes.shared == 100)
        #expect(encodes.own >= 3 * 95 && encodes.own <= 3 * 100, "\(encodes)")
        for user in Self.listeners {
            let back = try #require(people[user]?.returnAudio)
            #expect(!back.hasOwnEncoder)
            #expect(back.ownBlocks == 0 && back.sharedBlocks == 100)
        }
        // The three listeners got the very same payloads, each on its own SSRC with its own sequence.
        let payloads = Self.listeners.map { wire.rtp($0).map(\.payload) }
        #expect(payloads[0].count > 90)
        #expect(payloads[0] == payloads[1] && payloads[1] == payloads[2])
        let ssrcs = Set(Self.listeners.compactMap { wire.rtp($0).first?.ssrc })
        #expect(ssrcs == [903, 904, 905])
        // Each talker's stream is its own encode: not the listeners' packets.
        for user in Self.talkers {
            let packets = wire.rtp(user)
            #expect(packets.count > 90)
            #expect(packets.map(\.payload) != payloads[0])
            // Continuous: each packet one after the other, 20 ms of 48 kHz apart.
            for (a, b) in zip(packets, packets.dropFirst()) {
                #expect(b.sequenceNumber == a.sequenceNumber &+ 1)
                #expect(b.timestamp == a.timestamp &+ 960)
            }
        }
    }

    @Test func aSilentRoomGoesQuietOnTheWireWithDTXAndSendsSenderReports() throws {
        for k in 0..<2 {
            for user in Self.talkers { try send(k, from: user, hz: 0) }
        }
        try run(0..<150) { _, _ in 0 }
        for user in Self.listeners + Self.talkers {
            // DTX: after the first packets, one every 400 ms at most (libopus's keep-alive), not 50 a second.
            #expect(wire.rtp(user).count < 30, "\(user): \(wire.rtp(user).count) packets in 3 s of silence")
            // A sender report a second.
            let reports = wire.rtcp(user).compactMap { try? parseCompoundRTCP($0) }
            #expect(reports.count == 3, "\(user)")  // ticks 0, 50 and 100
            guard case .senderReport(let sr)? = reports.first?.first else {
                Issue.record("\(user): no sender report first")
                continue
            }
            #expect(sr.ssrc == people[user]?.returnAudio?.rtp.ssrc)
            guard case .sourceDescription(let sdes)? = reports.first?.dropFirst().first else {
                Issue.record("\(user): no CNAME")
                continue
            }
            #expect(sdes.chunks.first?.items.first?.value == Array("cohost-\(people[user]!.sessionID)".utf8))
        }
    }

    @Test func aSteadyLoudToneIsNeverCutByDTX() throws {
        for k in 0..<2 {
            for user in Self.talkers { try send(k, from: user, hz: user == "t1" ? 440 : 0) }
        }
        // Five seconds of one unchanging tone: Opus's VAD would take it for background noise and go quiet.
        try run(0..<250) { user, _ in user == "t1" ? 440 : 0 }
        for user in Self.listeners + ["t2", "t3"] {
            let packets = wire.rtp(user)
            #expect(packets.count >= 245, "\(user): \(packets.count) packets of 250 blocks")
            #expect(packets.allSatisfy { $0.payload.count > 2 })
        }
    }

    @Test func aReceiverReportingLossTurnsOnInBandFECForItsEncoder() throws {
        for k in 0..<2 {
            for user in Self.talkers { try send(k, from: user, hz: 700) }
        }
        try run(0..<40) { _, _ in 700 }
        let t1 = try #require(people["t1"]?.returnAudio)
        let l1 = try #require(people["l1"]?.returnAudio)
        #expect(t1.lossPercent == 0)
        // 64/256 lost in the receivers' last interval.
        for p in [people["t1"]!, people["l1"]!] {
            let ours = try #require(p.returnAudio?.rtp.ssrc)
            p.noteReceptionReports(
                [ReceptionReport(ssrc: ours, fractionLost: 64, totalLost: 12)], nowMs: 800, ntpNow: NTPTime.now())
        }
        try run(40..<60) { _, _ in 700 }  // tick 50 follows the reports
        #expect(t1.lossPercent == 25)
        #expect(l1.lossPercent == 0)  // a listener has no encoder of its own: the shared one protects it
        #expect(room.queue.sync { room.sharedLossPercent(channels: 1) } == 25)
        // Ten seconds without a lossy report: off again.
        people["t1"]!.noteReceptionReports(
            [ReceptionReport(ssrc: t1.rtp.ssrc, fractionLost: 0)], nowMs: 10_900, ntpNow: NTPTime.now())
        try run(540..<560) { _, _ in 700 }
        #expect(t1.lossPercent == 0)
    }
}
