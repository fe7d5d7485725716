import Foundation
import Testing
import Logging
import Media
import Codecs
import RTP
import TestSupport
@testable import Rooms

/// A sender that keeps talking is never heard, or metered, as digital silence: when its packets come late (the
/// host froze, a bad link delays and drops them) the mixer's read is concealed.
@Suite struct VoiceContinuityTests {
    static let ssrc: UInt32 = 0xA0D1

    func participant() throws -> Participant {
        let opus = NegotiatedStream(
            kind: .audio, ssrc: Self.ssrc, payloadType: 111, clockRate: 48_000, codec: "opus", srtp: nil)
        return try Participant(
            userId: "tone", sessionID: 1, audio: opus, video: nil, decodeChannels: 2, nowMs: 0,
            logger: Logger(label: "t"))
    }

    /// `count` Opus packets of a continuous 600 Hz sine at amplitude 0.3 (−13.5 dBFS RMS), 20 ms each.
    func tonePackets(_ count: Int) throws -> [[UInt8]] {
        let encoder = try OpusEncoder(channels: 2, bitrate: 64_000)
        return try (0..<count).map { try encoder.encode(sineBlock(frequency: 600, amplitude: 0.3, block: $0)) }
    }

    /// Plays `arrivals` (packet index, arrival ms) against a mixer that drains and pulls every 20 ms, as the room's
    /// tick does, and returns the RMS of every pulled block from the first one that had audio on.
    ///
    /// `stalls` (start ms, length ms) freeze the whole host: no tick runs and no packet is read. The tick after a
    /// stall mixes the blocks it skipped first (`catchingUp`, as `AudioPipeline` does), and only then does the
    /// packet thread read what queued up meanwhile: the order that leaves those blocks without audio.
    func mixedBlockLevels(
        _ p: Participant, packets: [[UInt8]], arrivals: [(index: Int, ms: Int64)], untilMs: Int64,
        stalls: [(start: Int64, length: Int64)] = [], afterTick: (Int64) -> Void = { _ in }
    ) -> [Float] {
        var pending = arrivals.sorted { $0.ms < $1.ms }[...]
        var block = [Float](repeating: 0, count: AudioFormat.blockFrames * 2)
        var levels: [Float] = []
        var started = false
        var skipped = 0
        func deliver(upTo ms: Int64) {
            while let next = pending.first, next.ms <= ms {
                pending.removeFirst()
                let payload = packets[next.index]
                p.receive(
                    RTPPacket(
                        payloadType: 111, sequenceNumber: UInt16(next.index), timestamp: UInt32(960 * next.index),
                        ssrc: Self.ssrc, payload: payload), bytes: payload.count + 12, nowMs: ms)
            }
        }
        for tick in stride(from: Int64(20), through: untilMs, by: 20) {
            if stalls.contains(where: { tick >= $0.start && tick < $0.start + $0.length }) {
                skipped += 1
                continue
            }
            let catchingUp = skipped > 0
            if !catchingUp { deliver(upTo: tick) }
            _ = p.drain(nowMs: tick)
            for _ in 0...skipped {
                let ok = p.pullAudio(into: &block, nowMs: tick, catchingUp: catchingUp).ok
                started = started || ok
                guard started else { continue }
                let sum = ok ? block.reduce(0) { $0 + $1 * $1 } : 0
                levels.append((sum / Float(block.count)).squareRoot())
            }
            skipped = 0
            if catchingUp { deliver(upTo: tick) }
            afterTick(tick)
        }
        return levels
    }

    /// The whole host freezes for 120 ms every second (the mixer's thread and the packet thread alike): the tick
    /// after each freeze makes up the six blocks it skipped before the packets of that time are read. Those
    /// blocks carry the voice on; the late packets then pay for them instead of delaying the voice.
    @Test func aHostThatFreezesLeavesNoSilentWindowInTheMix() throws {
        let p = try participant()
        let packets = try tonePackets(250)
        let arrivals = packets.indices.map { i in (i, Int64(20 * i)) }
        let stalls = (1...4).map { (start: Int64($0 * 1000 + 7), length: Int64(120)) }
        let levels = mixedBlockLevels(p, packets: packets, arrivals: arrivals, untilMs: 5000, stalls: stalls)
        #expect(levels.count > 240)
        let silent = levels.indices.filter { levels[$0] < 0.01 }
        #expect(silent.isEmpty, "blocks \(silent) of \(levels.count) are silent")
        let audio = try #require(p.reports().first { $0.kind == "audio" })
        #expect(audio.concealedMs == 4 * 120)
        // The voice's delay did not grow by what was concealed: the FIFO holds no more than its 40 ms prebuffer
        // and the block in flight.
        #expect(try #require(p.audio).bufferedFrames <= 3 * AudioFormat.blockFrames)
    }

    /// 10 % loss and 0–60 ms of random delay (so reordering), seeded, on a host that freezes for 100 ms every
    /// 1.3 s: every 100 ms window of the mix has the voice.
    @Test(arguments: [1, 2, 3, 4, 5, 6] as [UInt64])
    func aVoiceOverALossyJitteryLinkIsNeverSilentInTheMix(seed: UInt64) throws {
        let p = try participant()
        let packets = try tonePackets(250)
        var random = SplitMix64(seed: seed)
        var arrivals: [(index: Int, ms: Int64)] = []
        for i in packets.indices {
            let lost = random.nextUnit() < 0.10
            let delay = Int64(random.nextUnit() * 60)
            if !lost { arrivals.append((i, Int64(20 * i) + delay)) }
        }
        let stalls = (1...3).map { (start: Int64($0 * 1300 + 3), length: Int64(100)) }
        let levels = mixedBlockLevels(p, packets: packets, arrivals: arrivals, untilMs: 5000, stalls: stalls)
        #expect(levels.count > 240)
        var quietest: (window: Int, rms: Float) = (0, .infinity)
        for start in stride(from: 0, to: min(levels.count, 240) - 5, by: 5) {
            let rms = (levels[start..<start + 5].reduce(0) { $0 + $1 * $1 } / 5).squareRoot()
            if rms < quietest.rms { quietest = (start / 5, rms) }
        }
        // A lossy window concealed through a freeze is quieter than the tone (Opus's concealment fades), never silent.
        #expect(quietest.rms > 0.01, "window \(quietest.window) has RMS \(quietest.rms)")
    }

    /// A sender that stops is concealed for 200 ms after its last packet (it may only be late), then silent.
    @Test func aSenderThatStopsIsConcealedForTwoHundredMillisecondsThenSilent() throws {
        let p = try participant()
        let packets = try tonePackets(25)
        let arrivals = packets.indices.map { i in (i, Int64(20 * i)) }
        let levels = mixedBlockLevels(p, packets: packets, arrivals: arrivals, untilMs: 1500)
        let lastSound = try #require(levels.lastIndex { $0 > 0 })
        #expect(levels[(lastSound + 1)...].allSatisfy { $0 == 0 } && levels.count - lastSound > 30)
        // The last packet came at 480 ms: reads are concealed while the newest packet is at most 200 ms old.
        let audio = try #require(p.reports().first { $0.kind == "audio" })
        #expect(audio.concealedMs > 0 && audio.concealedMs <= 200, "\(audio.concealedMs) ms concealed")
        var block = [Float](repeating: 0, count: AudioFormat.blockFrames * 2)
        #expect(p.pullAudio(into: &block, nowMs: 1520).ok == false)
    }

    /// A sender that pauses in Opus DTX (a 1-byte "no speech" frame, then nothing) is silent at once: the pause is
    /// not loss, and nothing is concealed.
    @Test func aSenderPausingInDTXIsSilentNotConcealed() throws {
        let p = try participant()
        let packets = try tonePackets(25) + [[0x08]]  // TOC: SILK 20 ms, one frame, no payload
        let arrivals = packets.indices.map { i in (i, Int64(20 * i)) }
        let levels = mixedBlockLevels(p, packets: packets, arrivals: arrivals, untilMs: 1500)
        let lastSound = try #require(levels.lastIndex { $0 > 0 })
        #expect(levels[(lastSound + 1)...].allSatisfy { $0 == 0 })
        let audio = try #require(p.reports().first { $0.kind == "audio" })
        #expect(audio.concealedMs == 0)
    }

    /// A packet lost (not late) while the reads were dry is not concealed twice: the next packet's gap was played by
    /// the dry reads already, so the voice's delay does not grow by it.
    @Test func aGapPlayedByDryReadsIsNotConcealedAgain() throws {
        let p = try participant()
        let packets = try tonePackets(60)
        // Packet 30 is lost and everything after it comes 100 ms late: the reads of that time are dry, and packet 31
        // then shows a gap of one packet, which they played already.
        let arrivals = packets.indices.filter { $0 != 30 }.map { i in (i, Int64(20 * i) + (i > 30 ? 100 : 0)) }
        let voice = try #require(p.audio)
        var before: [Int] = []
        var after: [Int] = []
        _ = mixedBlockLevels(p, packets: packets, arrivals: arrivals, untilMs: 1160) { tick in
            if (300..<560).contains(tick) { before.append(voice.bufferedFrames) }
            if tick >= 800 { after.append(voice.bufferedFrames) }
        }
        // What the voice holds after each read, so how far behind it plays: the same before the loss and after.
        #expect(
            Set(before) == [AudioFormat.blockFrames] && Set(after) == Set(before), "before \(before), after \(after)")
    }
}
