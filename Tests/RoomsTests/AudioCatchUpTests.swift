import Codecs
import Foundation
import Logging
import Media
import RTP
import Testing
@testable import Rooms

/// When the shared clock falls behind it skips ticks; a room then mixes the skipped audio blocks on the next
/// tick, so no voice is left a block behind and the programme's sound stays at its pictures' time.
@Suite struct AudioCatchUpTests {
    static let ssrc: UInt32 = 0xA0D1

    func room(output path: String) throws -> (Room, Participant) {
        let request = #"{"name":"catchup","audioOnly":true,"audio":{"bitrate":64,"channels":1}}"#
        let config = try JSONDecoder().decode(RoomConfigRequest.self, from: Data(request.utf8)).resolve()
        let room = try Room(config: config, serverSSRC: 1, logger: Logger(label: "t")) { _, _, _ in }
        let opus = NegotiatedStream(
            kind: .audio, ssrc: Self.ssrc, payloadType: 111, clockRate: 48_000, codec: "opus", srtp: nil)
        let p = try Participant(
            userId: "u", sessionID: 1, audio: opus, video: nil, decodeChannels: 1, nowMs: 0,
            logger: Logger(label: "t"))
        _ = try room.add(p)
        _ = try room.startOutput(url: "file://" + path)
        return (room, p)
    }

    /// Sends Opus packet `k` (20 ms of a tone), arriving at `at` (by default on time, at k × 20 ms).
    func send(_ k: Int, to p: Participant, encoder: OpusEncoder, at: Int64? = nil) throws {
        var tone = [Float](repeating: 0, count: AudioFormat.blockFrames * 2)
        for i in 0..<AudioFormat.blockFrames {
            let v = Float(0.3 * sin(2 * Double.pi * 440 * Double(k * AudioFormat.blockFrames + i) / 48_000))
            tone[2 * i] = v
            tone[2 * i + 1] = v
        }
        let payload = try encoder.encode(tone)
        p.receive(
            RTPPacket(
                payloadType: 111, sequenceNumber: UInt16(k), timestamp: UInt32(960 * k), ssrc: Self.ssrc,
                payload: payload), bytes: payload.count + 12, nowMs: at ?? Int64(20 * k))
    }

    /// A room with one voice and an FLV file output; the voice's first two packets are in (its prebuffer).
    func start() throws -> (room: Room, p: Participant, encoder: OpusEncoder, file: String) {
        let file = NSTemporaryDirectory() + "cohost-catchup-\(UUID().uuidString).flv"
        let (room, p) = try room(output: file)
        let encoder = try OpusEncoder(channels: 2, bitrate: 32_000)
        for k in 0..<2 { try send(k, to: p, encoder: encoder) }
        return (room, p, encoder, file)
    }

    /// Ticks on time, packet `tick + 2` arriving just after each (it waits in the jitter buffer until the next tick
    /// drains it): after each read one block is left.
    func tick(_ ticks: Range<Int>, _ room: Room, _ p: Participant, _ encoder: OpusEncoder) throws {
        for tick in ticks {
            room.queue.sync { room.audioTick(Int64(tick), nowMs: Int64(20 * tick + 40)) }
            try send(tick + 2, to: p, encoder: encoder)
        }
    }

    func audioTimes(_ file: String) throws -> [Int] {
        flvTags(try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))).filter { $0.type == 8 }.dropFirst().map {
            Int($0.ms)
        }
    }

    @Test func skippedTicksAreMixedByTheNextOneSoTheVoiceKeepsItsDelay() throws {
        let (room, p, encoder, file) = try start()
        defer { try? FileManager.default.removeItem(atPath: file) }
        try tick(0..<5, room, p, encoder)
        let steady = p.audio?.bufferedFrames
        #expect(steady == 960)  // after a read: the prebuffer's second block; the next packet is on its way
        // The clock skips ticks 5, 6 and 7; their packets come all the same.
        for k in 7..<10 { try send(k, to: p, encoder: encoder) }
        room.queue.sync { room.audioTick(8, nowMs: 200) }
        try send(10, to: p, encoder: encoder)
        #expect(room.queue.sync { room.audioBlocksCaughtUp } == 3)
        #expect(p.audio?.bufferedFrames == steady)  // left unread, 3 blocks more: 60 ms more delay for good
        try tick(9..<30, room, p, encoder)
        _ = room.close()
        // Every block was encoded: the AAC frames follow on from each other, and there are as many as 30 blocks
        // make (28 whole frames of 1024 samples, the last kept back by the encoder's look-ahead; 27 blocks: 24).
        let times = try audioTimes(file)
        #expect(room.queue.sync { room.audioGaps } == 0)
        #expect(zip(times, times.dropFirst()).allSatisfy { $1 - $0 == 21 || $1 - $0 == 22 }, "\(times)")
        #expect(times.count == 27)
    }

    /// The voice levels (onVoiceLevels here, and the SEI and events with them) come every 10 blocks of the
    /// programme, so a tick that made up for skipped ones does not move them off its 200 ms grid.
    @Test func voiceLevelsStayOnTheProgrammesTwoHundredMillisecondGridAfterACatchUp() throws {
        let (room, p, encoder, file) = try start()
        defer { try? FileManager.default.removeItem(atPath: file) }
        try tick(0..<5, room, p, encoder)
        for k in 7..<10 { try send(k, to: p, encoder: encoder) }
        room.queue.sync { room.audioTick(8, nowMs: 200) }  // ticks 5-7 skipped
        try send(10, to: p, encoder: encoder)
        try tick(9..<30, room, p, encoder)
        _ = room.close()
        // The `time` of each onVoiceLevels (protocol/flv-voice-levels.md): the block it was measured on.
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
        let key: [UInt8] = [0x00, 0x04] + Array("time".utf8) + [0x00]
        var times: [Double] = []
        var at = 0
        while let found = bytes[at...].firstRange(of: key) {
            let raw = bytes[found.upperBound..<(found.upperBound + 8)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            times.append(Double(bitPattern: raw))
            at = found.upperBound
        }
        // Blocks 10 and 20 (the report of block 30 waits for an AAC frame past it), on the programme's clock:
        // (n - 1) × 20 ms plus the AAC priming (1024 samples, 21 ms). Counted in ticks, the first came at block 13.
        #expect(times == [201, 401])
    }

    /// The sender stalled with the machine: the packets of the skipped time come after the tick that made up for
    /// it. That tick played silence for what was missing; the late audio is dropped and the voice keeps its delay.
    @Test func audioOfTheSkippedTimeThatComesLateIsDroppedNotQueued() throws {
        let (room, p, encoder, file) = try start()
        defer { try? FileManager.default.removeItem(atPath: file) }
        try tick(0..<5, room, p, encoder)
        let steady = p.audio?.bufferedFrames
        room.queue.sync { room.audioTick(8, nowMs: 200) }  // ticks 5-7 skipped, and packets 7 and 8 not sent yet
        for k in 7..<11 { try send(k, to: p, encoder: encoder, at: 205) }
        room.queue.sync { room.audioTick(9, nowMs: 220) }
        try send(11, to: p, encoder: encoder)
        let audio = try #require(p.reports().first { $0.kind == "audio" })
        #expect(audio.underruns == 0 && audio.trimmedMs == 40)
        #expect(p.audio?.bufferedFrames == steady)  // an underrun and a new prebuffer would leave 2 blocks more
        _ = room.close()
    }

    @Test func aStallLongerThanTheFIFOsRestartsTheSoundAtTheTicksTime() throws {
        let (room, p, encoder, file) = try start()
        defer { try? FileManager.default.removeItem(atPath: file) }
        try tick(0..<10, room, p, encoder)
        // 40 ticks (800 ms) skipped: more than a voice's FIFO holds, so nothing is made up for.
        try tick(50..<80, room, p, encoder)
        #expect(room.queue.sync { room.audioBlocksCaughtUp } == 0)
        #expect(room.queue.sync { room.audioGaps } == 1)
        _ = room.close()
        let times = try audioTimes(file)
        // Before the stall the sound runs up to ≈ 200 ms; after it, it starts again at tick 50's time (1000 ms).
        let gap = try #require(zip(times, times.dropFirst()).first { $1 - $0 > 22 })
        #expect(gap.0 < 200 && gap.1 >= 1000 - 43 && gap.1 <= 1000 + 43, "\(times)")
    }
}
