import Foundation
import Synchronization
import Media
import RTP
import Ingest
import Codecs
import Playout
import Logging
import CohostAPI
import Publishing

/// One participant's voice: its Opus stream, the frames waiting to be decoded, the decoder and the FIFO the
/// mixer reads.
///
/// Packets arrive on the UDP thread and the mixer pulls on the room's queue: every entry point takes `lock`.
/// Frames are decoded when the mixer pulls them (`PendingAudioFrames`), so the Opus work of many voice rooms is
/// spread over the rooms' queues instead of the one UDP thread.
final class AudioReceiver: @unchecked Sendable {
    let ssrc: UInt32
    /// The SSRC on the wire: `ssrc`, or the one learnt for a stand-in (`NegotiatedStream.learnFromMID`). Feedback
    /// and reports name this one.
    private let wire: Atomic<UInt32>
    var wireSSRC: UInt32 { wire.load(ordering: .relaxed) }
    let codec: String
    private let lock = NSLock()
    private var state: State
    private let userId: String
    private let logger: Logger

    /// Gaps longer than this are a pause or a restart, not loss: they are not concealed.
    static let maxConcealedFrames = AudioFormat.blockFrames * 10
    /// A read that finds the FIFO dry while the sender is alive (a packet came within this, and it is not in a
    /// DTX pause) is concealed rather than silent: late packets (a starved host, jitter past the buffer) must
    /// not be heard, or metered, as digital silence. At most this long of such concealment in a row.
    static let aliveMs: Int64 = 200
    static let maxConcealedReads = 10

    /// Where each Opus packet also goes, as received, while the participant is recorded.
    private let tap = RecordingTap()

    private struct State {
        let stream: InboundStream
        let decoder: OpusDecoder
        var fifo = AudioFIFO()
        /// Frames released by the jitter buffer, decoded at the next pull.
        var pending = PendingAudioFrames()
        var scratch = [Float](repeating: 0, count: AudioFormat.blockFrames * 2 * 6)
        var framesDecoded = 0
        var decodeErrors = 0
        /// Where the next packet should start (RTP time at 48 kHz), to size the concealment of a gap.
        var expectedTimestamp: UInt32?
        var concealedFrames = 0
        /// The last packet was a DTX frame: the timestamp gap before the next one is a pause.
        var afterDTX = false
        /// DTX frames taken as silence without decoding.
        var silentFrames = 0
        /// Concealment allowed (frames), earned at the rate of wall-clock time: a sender whose timestamps
        /// leap ahead on every packet cannot make the decoder synthesise more audio than time passes.
        var concealCredit = 0
        var lastDecodeMs: Int64?
        var rates = StreamRates()
        /// RTP time of the block the mixer took last, and when: what the listener hears now.
        var lastPulledTimestamp: UInt32?
        var lastPullMs: Int64 = 0
        /// When the last packet of this stream arrived (whatever the jitter buffer does with it).
        var lastArrivalMs: Int64?
        /// Reads concealed in a row (the FIFO dry while the sender is alive).
        var concealedReadRun = 0
        /// The voice is playing: a read has had audio since it started, or since its sender last went quiet.
        var playing = false
        /// Frames dry reads concealed since the last decoded packet: if the packets they stood in for were lost, not
        /// late, the gap the next packet shows has been played already and is not concealed again.
        var concealedAhead = 0
    }

    /// `decodeChannels`: 1 when the room's programme is mono (voices decoded to mono, stereo senders downmixed).
    init(_ negotiated: NegotiatedStream, decodeChannels: Int, userId: String, logger: Logger) throws {
        ssrc = negotiated.ssrc
        wire = Atomic(negotiated.ssrc)
        codec = negotiated.codec
        self.userId = userId
        self.logger = logger
        let stream = InboundStream(
            ssrc: negotiated.ssrc, payloadType: negotiated.payloadType,
            clockRate: negotiated.clockRate, depacketizer: OpusDepacketizer(), maxDelayMs: 40,
            adaptive: true, adaptiveDelay: .audio)
        state = State(stream: stream, decoder: try OpusDecoder(channels: decodeChannels))
    }

    /// Decoded audio waiting in the FIFO (frames), for tests.
    var bufferedFrames: Int { lock.withLock { state.fifo.bufferedFrames } }

    /// Handles one parsed RTP packet of this stream. Frames are queued as the stream completes them (a callback,
    /// not a returned array: no allocation per packet) and decoded at the mixer's pull.
    func receive(_ packet: RTPPacket, bytes: Int, nowMs: Int64) {
        withState { s in
            s.lastArrivalMs = nowMs
            let stream = s.stream
            stream.receive(packet, bytes: bytes, nowMs: nowMs) { frame in queue(frame, into: &s, nowMs: nowMs) }
        }
    }

    /// Releases frames whose reordering wait expired; called by the room every tick.
    func drain(nowMs: Int64) {
        withState { s in
            let stream = s.stream
            stream.drain(nowMs: nowMs) { frame in queue(frame, into: &s, nowMs: nowMs) }
        }
    }

    /// Copies the next 20 ms block into `output`; false when there is none (the sender is silent or gone).
    func pull(into output: inout [Float], nowMs: Int64, catchingUp: Bool) -> Bool {
        withState { s in
            decodePending(&s)
            let ok = s.fifo.read(into: &output, frames: AudioFormat.blockFrames, nowMs: nowMs, catchingUp: catchingUp)
            if ok {
                s.concealedReadRun = 0
                s.playing = true
                if let next = s.expectedTimestamp {
                    // The FIFO holds the decoded audio up to `next`, contiguously (gaps are concealed).
                    s.lastPulledTimestamp = next &- UInt32(s.fifo.bufferedFrames + AudioFormat.blockFrames)
                    s.lastPullMs = nowMs
                }
                return true
            }
            return concealRead(&s, into: &output, nowMs: nowMs)
        }
    }

    /// A dry read of a sender that is still talking: the decoder carries the voice on (Opus PLC) for this block.
    /// What arrives late then plays after it; the FIFO's trim takes the surplus back within a second. Before the
    /// voice first plays (its prebuffer, a lip-sync hold) there is nothing to carry on: silence.
    private func concealRead(_ s: inout State, into output: inout [Float], nowMs: Int64) -> Bool {
        guard s.playing, !s.afterDTX, let arrived = s.lastArrivalMs, nowMs - arrived <= Self.aliveMs,
            s.concealedReadRun < Self.maxConcealedReads, output.count >= AudioFormat.blockFrames * 2
        else {
            // A sender gone quiet starts again from silence, as at the start.
            if s.playing, s.afterDTX || (s.lastArrivalMs.map { nowMs - $0 > Self.aliveMs } ?? true) {
                s.playing = false
            }
            return false
        }
        let frames: Int
        do {
            frames = try s.decoder.conceal(frames: AudioFormat.blockFrames, into: &s.scratch)
        } catch {
            s.decodeErrors += 1
            return false
        }
        let channels = s.decoder.channels
        s.scratch.withUnsafeBufferPointer { src in
            output.withUnsafeMutableBufferPointer { dst in
                for i in 0..<AudioFormat.blockFrames {
                    let left = i < frames ? src[i * channels] : 0
                    dst[2 * i] = left
                    dst[2 * i + 1] = i < frames ? src[i * channels + channels - 1] : 0
                }
            }
        }
        s.concealedReadRun += 1
        s.concealedAhead += AudioFormat.blockFrames
        s.concealedFrames += AudioFormat.blockFrames
        return true
    }

    /// The sender's capture time (NTP seconds) of the audio the mixer plays at `nowMs`, nil without a sender
    /// report or before the first block; and whether a lip-sync delay change still waits for a pause.
    func playout(nowMs: Int64) -> (captureSeconds: Double?, syncChangePending: Bool) {
        lock.withLock {
            let pendingChange = state.fifo.pendingSyncChangeFrames != 0
            guard let rtp = state.lastPulledTimestamp,
                let capture = state.stream.senderClock.ntpSeconds(rtpTimestamp: rtp)
            else { return (nil, pendingChange) }
            return (capture + Double(nowMs - state.lastPullMs) / 1000, pendingChange)
        }
    }

    /// Delays this voice by `frames` for lip-sync. What is queued is decoded first, so a cut the FIFO makes at
    /// once (before its prebuffer fills) is whole.
    func setSyncDelay(frames: Int) {
        withState { s in
            decodePending(&s)
            s.fifo.setSyncDelay(frames: frames)
        }
    }

    func noteSenderReport(_ sr: SenderReport, nowMs: Int64) { lock.withLock { state.stream.note(sr, nowMs: nowMs) } }

    /// This stream's reception report block, after updating its rates (once a second).
    func receptionReport(nowMs: Int64) -> ReceptionReport {
        var block = withState { s in
            let stream = s.stream
            return stream.receptionReport(nowMs: nowMs, updating: &s.rates, framesDecoded: s.framesDecoded)
        }
        block.ssrc = wireSSRC
        return block
    }

    /// The real SSRC of a stand-in, learnt from the first packet carrying the line's MID.
    func learn(wireSSRC real: UInt32) { wire.store(real, ordering: .relaxed) }

    func report() -> StreamReport {
        lock.withLock {
            let s = state.stream.stats
            let rate = AudioFormat.sampleRate
            return StreamReport(
                kind: "audio", codec: codec, ssrc: wireSSRC, packets: s.packets, bytes: s.bytes,
                lost: s.lost, framesDecoded: state.framesDecoded, decodeErrors: state.decodeErrors,
                fps: state.rates.fps, kbps: state.rates.kbps,
                jitterMs: s.jitter * 1000 / Double(state.stream.clockRate), nacksSent: 0,
                keyframeRequests: 0, concealedMs: state.concealedFrames * 1000 / rate,
                retransmissions: 0, roundTripMs: nil,
                lipSyncDelayMs: state.fifo.syncDelayFrames * 1000 / rate,
                underruns: state.fifo.underruns, trimmedMs: state.fifo.trimmedFrames * 1000 / rate,
                pictureBuffersReplaced: 0, voiceMarginMs: state.fifo.margin.lastWindowMinMs)
        }
    }

    // MARK: decoding (under `lock`)

    /// Runs `body` on the state moved out of `self` (so the FIFO ring stays uniquely referenced: writing it
    /// copies nothing), under `lock`.
    private func withState<R>(_ body: (inout State) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&state)
    }

    /// Starts (or, with nil, stops) handing every packet to `recorder`; false when another recorder has it.
    func record(into recorder: TrackRecorder?) -> Bool { tap.attach(recorder) }

    private func queue(_ frame: EncodedFrame, into s: inout State, nowMs: Int64) {
        tap.audio(frame, arrivalMs: nowMs)
        if s.pending.isFull, let oldest = s.pending.popFirst() {
            decode(oldest.data, rtpTimestamp: oldest.rtpTimestamp, into: &s, nowMs: oldest.releasedMs)
        }
        s.pending.push(frame, releasedMs: nowMs)
    }

    /// Decodes every queued frame into the FIFO, oldest first, each as of the time it was released.
    private func decodePending(_ s: inout State) {
        while let frame = s.pending.popFirst() {
            decode(frame.data, rtpTimestamp: frame.rtpTimestamp, into: &s, nowMs: frame.releasedMs)
        }
    }

    private func decode(_ data: [UInt8], rtpTimestamp: UInt32, into s: inout State, nowMs: Int64) {
        let elapsedMs = max(0, nowMs - (s.lastDecodeMs ?? nowMs))
        s.lastDecodeMs = nowMs
        s.concealCredit = Int(
            min(
                Int64(Self.maxConcealedFrames),
                Int64(s.concealCredit) + elapsedMs * Int64(AudioFormat.sampleRate) / 1000))
        do {
            // Opus DTX: a "no speech" frame becomes silence without waking the decoder, and the gap after it is
            // a pause, not loss: nothing to conceal.
            if let frames = OpusSilence.frames(of: data) {
                s.fifo.writeSilence(frames: frames, arrivedMs: nowMs)
                s.expectedTimestamp = rtpTimestamp &+ UInt32(frames)
                s.afterDTX = true
                s.silentFrames += 1
                s.concealedAhead = 0
                return
            }
            if let expected = s.expectedTimestamp, !s.afterDTX {
                let played = s.concealedAhead
                let gap = Int(Int32(bitPattern: rtpTimestamp &- expected)) - played
                if gap > 0 && gap <= s.concealCredit {
                    s.concealCredit -= gap
                    try conceal(gap, before: data, into: &s, nowMs: nowMs)
                }
            }
            s.concealedAhead = 0
            s.afterDTX = false
            let frames = try s.decoder.decode(data, into: &s.scratch)
            s.fifo.write(s.scratch, frames: frames, channels: s.decoder.channels, arrivedMs: nowMs)
            s.expectedTimestamp = rtpTimestamp &+ UInt32(frames)
            s.framesDecoded += 1
        } catch {
            s.decodeErrors += 1
            logger.debug("opus decode failed", metadata: ["user": "\(userId)", "error": "\(error)"])
        }
    }

    /// Fills a gap of `frames` lost samples so the mix never hears silence-then-burst: Opus PLC for all
    /// but the last 20 ms, which comes from the next packet's in-band FEC when it carries some.
    private func conceal(_ frames: Int, before next: [UInt8], into s: inout State, nowMs: Int64) throws(CodecError) {
        var remaining = frames
        while remaining > AudioFormat.blockFrames {
            let chunk = min(remaining - AudioFormat.blockFrames, AudioFormat.blockFrames * 6)
            let n = try s.decoder.conceal(frames: chunk, into: &s.scratch)
            s.fifo.write(s.scratch, frames: n, channels: s.decoder.channels, arrivedMs: nowMs)
            remaining -= chunk
        }
        let n = try s.decoder.recover(frames: remaining, from: next, into: &s.scratch)
        s.fifo.write(s.scratch, frames: n, channels: s.decoder.channels, arrivedMs: nowMs)
        s.concealedFrames += frames
    }
}
