import Foundation
import Testing
import Logging
import Media
import Codecs
import RTP
import Playout
@testable import Rooms

/// A participant's packet path: retransmissions, keyframe requests by FIR, audio loss concealment.
@Suite struct ParticipantMediaTests {
    static let videoSSRC: UInt32 = 5000
    static let rtxSSRC: UInt32 = 5001

    func participant(
        fir: Bool = false, rtx: Bool = false, audio: Bool = false, decodeChannels: Int = 2
    ) throws -> Participant {
        var video = NegotiatedStream(
            kind: .video, ssrc: Self.videoSSRC, payloadType: 96, clockRate: 90_000, codec: "VP8", srtp: nil)
        if fir { video.keyframeRequest = .fir }
        if rtx { video.retransmission = (Self.rtxSSRC, 97) }
        let opus =
            audio
            ? NegotiatedStream(
                kind: .audio, ssrc: 0xA0D1, payloadType: 111, clockRate: 48_000, codec: "opus", srtp: nil) : nil
        return try Participant(
            userId: "u", sessionID: 1, audio: opus, video: video, decodeChannels: decodeChannels,
            nowMs: 0, logger: Logger(label: "t"))
    }

    func vp8(_ seq: UInt16, ssrc: UInt32 = videoSSRC, pt: UInt8 = 96) -> RTPPacket {
        RTPPacket(
            marker: false, payloadType: pt, sequenceNumber: seq, timestamp: 3000, ssrc: ssrc,
            payload: [0x90, 0x80, 0x01, 0x00])
    }

    func nacked(_ packets: [RTCPPacket]) -> [UInt16] {
        packets.flatMap { packet -> [UInt16] in
            if case .nack(let n) = packet { return n.lostSequenceNumbers } else { return [] }
        }
    }

    @Test func aRetransmissionOnTheRepairSSRCFillsTheNackedHole() throws {
        let p = try participant(rtx: true)
        for seq: UInt16 in [10, 11, 13] { p.receive(vp8(seq), bytes: 100, nowMs: 10) }
        #expect(try nacked(p.feedback(nowMs: 25, serverSSRC: 7, reportDue: false)) == [12])
        // RFC 4588 §4: payload = original sequence number (big-endian) + original payload.
        var repair = vp8(900, ssrc: Self.rtxSSRC, pt: 97)
        repair.payload = [0x00, 12] + repair.payload
        p.receive(repair, bytes: 102, nowMs: 40)
        #expect(try nacked(p.feedback(nowMs: 300, serverSSRC: 7, reportDue: false)).isEmpty)
        let video = try #require(p.reports().first { $0.kind == "video" })
        #expect(video.retransmissions == 1)
        #expect(video.lost == 0)
    }

    @Test func aRepairPacketWithTheWrongPayloadTypeOrNoOriginalSequenceIsIgnored() throws {
        let p = try participant(rtx: true)
        p.receive(vp8(1, ssrc: Self.rtxSSRC, pt: 96), bytes: 100, nowMs: 10)
        var short = vp8(2, ssrc: Self.rtxSSRC, pt: 97)
        short.payload = [0x00]
        p.receive(short, bytes: 13, nowMs: 10)
        let video = try #require(p.reports().first { $0.kind == "video" })
        #expect(video.retransmissions == 0 && video.packets == 0)
    }

    @Test func aSenderThatOnlyUnderstandsFIRGetsFIRsWithIncreasingSequenceNumbers() throws {
        let p = try participant(fir: true)
        #expect(
            try p.feedback(nowMs: 0, serverSSRC: 7, reportDue: false).last
                == .fir(FullIntraRequest(senderSSRC: 7, entries: [.init(ssrc: Self.videoSSRC, sequenceNumber: 1)])))
        #expect(
            try p.feedback(nowMs: 600, serverSSRC: 7, reportDue: false).last
                == .fir(FullIntraRequest(senderSSRC: 7, entries: [.init(ssrc: Self.videoSSRC, sequenceNumber: 2)])))
    }

    /// Also in a mono room, whose voices are decoded to mono and written to both channels of the FIFO.
    @Test(arguments: [2, 1]) func aLostOpusPacketIsConcealedSoTheAudioStaysContinuous(decodeChannels: Int) throws {
        let p = try participant(audio: true, decodeChannels: decodeChannels)
        let encoder = try OpusEncoder(channels: 2, bitrate: 64_000)
        var tone = [Float](repeating: 0, count: AudioFormat.blockFrames * 2)
        var packets: [[UInt8]] = []
        for block in 0..<5 {
            for i in 0..<AudioFormat.blockFrames {
                let t = Double(block * AudioFormat.blockFrames + i) / 48_000
                let v = Float(0.3 * sin(2 * Double.pi * 440 * t))
                tone[2 * i] = v
                tone[2 * i + 1] = v
            }
            packets.append(try encoder.encode(tone))
        }
        for (i, payload) in packets.enumerated() where i != 2 {
            let packet = RTPPacket(
                payloadType: 111, sequenceNumber: UInt16(100 + i), timestamp: UInt32(960 * i),
                ssrc: 0xA0D1, payload: payload)
            p.receive(packet, bytes: payload.count + 12, nowMs: Int64(20 * i))
        }
        _ = p.drain(nowMs: 1000)  // the jitter buffer gives up on packet 2
        var block = [Float](repeating: 0, count: AudioFormat.blockFrames * 2)
        var blocks = 0
        var energy: Float = 0
        while p.pullAudio(into: &block, nowMs: 2000).ok {
            blocks += 1
            for i in 0..<AudioFormat.blockFrames {
                // Mono decoding writes one sample to both channels; stereo decoding of L = R is equal to rounding.
                #expect(
                    decodeChannels == 1 ? block[2 * i] == block[2 * i + 1] : abs(block[2 * i] - block[2 * i + 1]) < 1e-5
                )
                energy += block[2 * i] * block[2 * i]
            }
        }
        #expect(blocks == 5)
        #expect(energy > 100)  // a 0.3 sine: ≈0.045 per sample over 4800 samples, less the encoder's start-up
        let audio = try #require(p.reports().first { $0.kind == "audio" })
        #expect(audio.concealedMs == 20)
        #expect(audio.framesDecoded == 4)
    }

    @Test func timestampsLeapingAheadOnEveryPacketAreNotConcealedFasterThanTimePasses() throws {
        let p = try participant(audio: true)
        let payload = try OpusEncoder(channels: 2, bitrate: 64_000).encode(
            [Float](repeating: 0, count: AudioFormat.blockFrames * 2))
        // Consecutive sequence numbers 1 ms apart, each claiming 100 ms more media time than it carries.
        for i in 0..<20 {
            let packet = RTPPacket(
                payloadType: 111, sequenceNumber: UInt16(i), timestamp: UInt32(4800 * i),
                ssrc: 0xA0D1, payload: payload)
            p.receive(packet, bytes: payload.count + 12, nowMs: Int64(i))
        }
        var block = [Float](repeating: 0, count: AudioFormat.blockFrames * 2)
        _ = p.pullAudio(into: &block, nowMs: 20)  // decodes what is queued, each frame as of its release
        let audio = try #require(p.reports().first { $0.kind == "audio" })
        #expect(audio.framesDecoded == 20)
        #expect(audio.concealedMs == 0)
    }

    /// Voices are decoded on the mixer's pull, not on the UDP thread; a mixer that stops pulling makes the
    /// packet path decode the oldest frames itself once 16 are queued, so nothing is lost or grows.
    @Test func voicesAreDecodedWhenTheMixerPullsAndAStalledMixerCannotMakeTheQueueGrow() throws {
        let p = try participant(audio: true)
        let encoder = try OpusEncoder(channels: 2, bitrate: 64_000)
        let silence = [Float](repeating: 0, count: AudioFormat.blockFrames * 2)
        func send(_ i: Int) throws {
            let payload = try encoder.encode(silence)
            p.receive(
                RTPPacket(
                    payloadType: 111, sequenceNumber: UInt16(i), timestamp: UInt32(960 * i), ssrc: 0xA0D1,
                    payload: payload), bytes: payload.count + 12, nowMs: Int64(20 * i))
        }
        for i in 0..<3 { try send(i) }
        #expect(try #require(p.reports().first { $0.kind == "audio" }).framesDecoded == 0)
        var block = [Float](repeating: 1, count: AudioFormat.blockFrames * 2)
        #expect(p.pullAudio(into: &block, nowMs: 60).ok)
        #expect(try #require(p.reports().first { $0.kind == "audio" }).framesDecoded == 3)
        for i in 3..<23 { try send(i) }
        #expect(try #require(p.reports().first { $0.kind == "audio" }).framesDecoded == 7)  // 20 queued: 4 over 16
        _ = p.pullAudio(into: &block, nowMs: 460)
        #expect(try #require(p.reports().first { $0.kind == "audio" }).framesDecoded == 23)
    }

    /// What an operator sees of a voice's FIFO: a burst past its 200 ms ceiling is cut back to the prebuffer
    /// (a skip heard, `trimmedMs`), and running dry while playing is a gap (`underruns`).
    @Test func aVoicesBurstCutAndItsRunningDryAreReported() throws {
        let p = try participant(audio: true)
        let payload = try OpusEncoder(channels: 2, bitrate: 64_000).encode(
            [Float](repeating: 0, count: AudioFormat.blockFrames * 2))
        for i in 0..<15 {
            p.receive(
                RTPPacket(
                    payloadType: 111, sequenceNumber: UInt16(i), timestamp: UInt32(960 * i), ssrc: 0xA0D1,
                    payload: payload), bytes: payload.count + 12, nowMs: 0)
        }
        var block = [Float](repeating: 0, count: AudioFormat.blockFrames * 2)
        var reads = 0
        while p.pullAudio(into: &block, nowMs: 300).ok { reads += 1 }
        // The 11th block passed 10 and the FIFO went back to its 2-block prebuffer: 9 blocks cut, 6 read.
        #expect(reads == 6)
        let audio = try #require(p.reports().first { $0.kind == "audio" })
        #expect(audio.trimmedMs == 180)
        #expect(audio.underruns == 1)
        #expect(audio.pictureBuffersReplaced == 0)
    }

    /// A reader that keeps every picture it was given (a stuck snapshot) leaves the decoder no slot to reuse:
    /// from the ninth picture on each one is a new buffer, and the video stream's report says so.
    @Test func picturesHeldByAReaderMakeTheDecoderReplaceBuffersAndTheReportCountsThem() throws {
        let p = try participant()
        let encoder = try VP8Encoder(width: 64, height: 48, fps: 30, bitrateKbps: 200)
        var held: [Picture] = []
        for i in 0..<20 {
            let frame = VideoFrame(width: 64, height: 48, color: YUVColor(y: UInt8(16 + 9 * i), u: 128, v: 128))
            for out in try encoder.encode(frame, pts: Int64(i), forceKeyframe: false) {
                let packet = RTPPacket(
                    marker: true, payloadType: 96, sequenceNumber: UInt16(i), timestamp: UInt32(3000 * i),
                    ssrc: Self.videoSSRC, payload: [0x10] + out.data)
                p.receive(packet, bytes: out.data.count + 13, nowMs: Int64(33 * i))
            }
            _ = p.drain(nowMs: Int64(33 * i))
            var timing = PictureTiming()
            if let picture = p.currentFrame(nowMs: Int64(33 * i), holdMs: 1000, timing: &timing) {
                held.append(picture)
            }
        }
        #expect(p.video?.primary.pictures.decoded == 20 && held.count == 20)
        let video = try #require(p.reports().first { $0.kind == "video" })
        #expect(video.pictureBuffersReplaced == 20 - 8)  // 8 slots (VideoPresenter.slotCount)
        #expect(video.underruns == 0 && video.trimmedMs == 0)
    }

    @Test func picturesCanvasesStillHoldKeepTheirPixelsWhileDecodingGoesOnAndNoSlotIsMadeAnew() throws {
        let p = try participant()
        let encoder = try VP8Encoder(width: 160, height: 120, fps: 30, bitrateKbps: 400)
        var seq: UInt16 = 0
        // The pictures of the last three canvases, as a slow snapshot would keep them: only the newest is still the
        // one on screen, so the older two are protected from the decoder by nothing but their being held.
        var drawn: [(picture: Picture, pixels: VideoFrame)] = []
        var checked = 0
        for i in 0..<30 {
            let now = Int64(33 * i)
            // A flat picture whose brightness changes every frame: a held picture written over would show.
            let frame = VideoFrame(width: 160, height: 120, color: YUVColor(y: UInt8(16 + 7 * i), u: 128, v: 128))
            for out in try encoder.encode(frame, pts: Int64(i), forceKeyframe: false) {
                let packet = RTPPacket(
                    marker: true, payloadType: 96, sequenceNumber: seq, timestamp: UInt32(3000 * i),
                    ssrc: Self.videoSSRC, payload: [0x10] + out.data)  // S=1, partition 0
                seq &+= 1
                p.receive(packet, bytes: out.data.count + 13, nowMs: now)
            }
            _ = p.drain(nowMs: now)
            for held in drawn {
                let pixels = held.picture.copied()
                #expect(
                    pixels.y == held.pixels.y && pixels.u == held.pixels.u && pixels.v == held.pixels.v, "tick \(i)")
                checked += 1
            }
            var timing = PictureTiming()
            if let picture = p.currentFrame(nowMs: now, holdMs: 1000, timing: &timing) {
                drawn.append((picture, picture.copied()))
                if drawn.count > 3 { drawn.removeFirst() }
            }
        }
        #expect((p.video?.primary.pictures.decoded ?? 0) >= 25)
        #expect(checked >= 70)
        #expect(p.video?.primary.pictures.slotsReplaced == 0)
    }
}
