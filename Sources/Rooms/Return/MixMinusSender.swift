import Codecs
import Logging
import Media
import Mixing

/// Sends every listening participant of a room the room's mix without their own voice, each 20 ms block.
///
/// Whoever's voice is not in the mix at that instant (silent, in DTX, muted, or sending no audio) hears the
/// programme's mix itself: it is encoded once per channel count and the same packet goes to all of them. Only the
/// talkers (and for `ReturnAudio.holdBlocks` after they stop) get an encode of their own: the room's sum minus
/// their voice, through a limiter that starts from the programme's state (docs/return-path.md). Confined to the
/// room's queue; buffers are reused, so a block allocates nothing once every encoder exists.
final class MixMinusSender {
    /// Sends one datagram of `participant`'s return stream of that kind.
    typealias Transport = @Sendable (Participant, NegotiatedStream.Kind, [UInt8]) -> Void

    private let transport: Transport
    private let logger: Logger
    /// The shared encoders by channel count (index 1 and 2), their packet of the current block, and whether they
    /// encoded the block before (else they start afresh: a stale state would click).
    private var shared: [OpusEncoder?] = [nil, nil, nil]
    private var sharedPacket: [[UInt8]] = [[], [], []]
    private var sharedTick: [Int64?] = [nil, nil, nil]
    private var sharedLoss = [0, 0, 0]
    private var ownMix = [Float](repeating: 0, count: MixMinus.blockSamples)
    private var mono = [Float](repeating: 0, count: AudioFormat.blockFrames)
    private(set) var sharedEncodes = 0
    private(set) var ownEncodes = 0
    private(set) var encodeErrors = 0

    /// The loss protection of the shared encoder for `channels`, percent.
    func sharedLossPercent(channels: Int) -> Int { sharedLoss[channels] }

    init(transport: @escaping Transport, logger: Logger) {
        self.transport = transport
        self.logger = logger
    }

    /// Sends block `tick` to each of `present` that listens. `blocks[i]` and `voices[i]` are `present[i]`'s pulled
    /// voice and whether it went into `sum` (the unlimited sum of every voice) at `gain`; `programme` is the limited
    /// mix and `limiterBefore` the programme limiter's state before it limited this block. `reportDue`: sender
    /// reports go out and loss protection follows the receivers' reports.
    func send(
        tick: Int64, present: [Participant], blocks: [[Float]], voices: [(ok: Bool, gain: Float)],
        sum: [Float], programme: [Float], limiterBefore: SoftLimiter, reportDue: Bool, nowMs: Int64
    ) {
        let timestamp = UInt32(truncatingIfNeeded: tick &* Int64(AudioFormat.blockFrames))
        if reportDue { followLoss(present, nowMs: nowMs) }
        for i in present.indices {
            let p = present[i]
            guard let back = p.returnAudio else { continue }
            let voice = voices[i]
            if voice.ok && MixMinus.peak(blocks[i], gain: voice.gain) > MixMinus.presenceThreshold {
                back.holdLeft = ReturnAudio.holdBlocks
            } else if back.holdLeft > 0 {
                back.holdLeft -= 1
            }
            let own = back.holdLeft > 0
            do {
                if own {
                    try encodeOwn(
                        back, voice: blocks[i], gain: voice.ok ? voice.gain : 0, sum: sum, limiterBefore: limiterBefore)
                } else {
                    try encodeShared(channels: back.channels, programme: programme, tick: tick)
                }
            } catch {
                encodeErrors += 1
                logger.debug("return audio encode failed", metadata: ["user": "\(p.userId)", "error": "\(error)"])
                continue
            }
            back.lastWasOwn = own
            back.countBlock(own: own)
            send(own ? back.packet : sharedPacket[back.channels], to: p, back, timestamp: timestamp)
        }
        if reportDue { sendReports(to: present, timestamp: timestamp) }
    }

    /// DTX: a packet of at most 2 bytes says "still silent" and is not sent (RFC 7587 §3.1.3); the next one that is
    /// starts a talkspurt (marker).
    private func send(_ payload: [UInt8], to p: Participant, _ back: ReturnAudio, timestamp: UInt32) {
        guard payload.count > 2 else {
            back.paused = true
            return
        }
        back.rtp.send(payload: payload[...], timestamp: timestamp, marker: back.paused) { transport(p, .audio, $0) }
        back.paused = false
    }

    private func sendReports(to listeners: [Participant], timestamp: UInt32) {
        let ntp = NTPTime.now()
        for p in listeners {
            guard let back = p.returnAudio else { continue }
            back.rtp.sendReport(ntp: ntp, rtpTimestamp: timestamp) { transport(p, .audio, $0) }
        }
    }

    /// Sends block `tick` of the programme's mix (the shared encode) to each viewer (WHEP), who has no voice in it.
    func sendShared(tick: Int64, to viewers: [Participant], programme: [Float], reportDue: Bool) {
        let timestamp = UInt32(truncatingIfNeeded: tick &* Int64(AudioFormat.blockFrames))
        for p in viewers {
            guard let back = p.returnAudio else { continue }
            do { try encodeShared(channels: back.channels, programme: programme, tick: tick) } catch {
                encodeErrors += 1
                continue
            }
            back.countBlock(own: false)
            send(sharedPacket[back.channels], to: p, back, timestamp: timestamp)
        }
        if reportDue { sendReports(to: viewers, timestamp: timestamp) }
    }

    /// The room's sum without this voice, limited from the programme limiter's state when the talker just
    /// switched to it (so the level does not jump), encoded by the talker's own encoder.
    private func encodeOwn(
        _ back: ReturnAudio, voice: [Float], gain: Float, sum: [Float], limiterBefore: SoftLimiter
    ) throws(CodecError) {
        let encoder = try back.ownEncoder()
        if !back.lastWasOwn {
            encoder.reset()
            back.limiter = limiterBefore
        }
        MixMinus.remove(voice, gain: gain, from: sum, into: &ownMix)
        ownMix.withUnsafeMutableBufferPointer { back.limiter.process(stereo: $0) }
        try encode(ownMix, channels: back.channels, with: encoder, into: &back.packet)
        ownEncodes += 1
    }

    /// The programme's mix for `channels`, encoded once per block whoever needs it.
    private func encodeShared(channels: Int, programme: [Float], tick: Int64) throws(CodecError) {
        guard sharedTick[channels] != tick else { return }
        let encoder: OpusEncoder
        if let existing = shared[channels] {
            encoder = existing
            if sharedTick[channels] != tick - 1 { encoder.reset() }
        } else {
            encoder = try ReturnAudio.makeEncoder(channels: channels)
            shared[channels] = encoder
        }
        sharedTick[channels] = tick
        try encode(programme, channels: channels, with: encoder, into: &sharedPacket[channels])
        sharedEncodes += 1
    }

    /// DTX only while the block is silent: Opus's voice activity detector learns a steady sound (a tone, a held
    /// chord) as background noise and would stop sending it; a quiet mix is what DTX is for.
    private func encode(
        _ stereo: [Float], channels: Int, with encoder: OpusEncoder, into out: inout [UInt8]
    )
        throws(CodecError)
    {
        let quiet = MixMinus.peak(stereo, gain: 1) <= MixMinus.presenceThreshold
        if encoder.dtx != quiet { try encoder.setDTX(quiet) }
        if channels == 2 {
            try stereo.withUnsafeBufferPointer { pcm throws(CodecError) in try encoder.encode(pcm, into: &out) }
        } else {
            MixMinus.downmix(stereo, into: &mono)
            try mono.withUnsafeBufferPointer { pcm throws(CodecError) in try encoder.encode(pcm, into: &out) }
        }
    }

    /// In-band FEC on while a receiver reports loss: a talker's own encoder for its receiver, each shared encoder
    /// for the worst of the receivers it may serve.
    private func followLoss(_ present: [Participant], nowMs: Int64) {
        var worst = [0, 0, 0]
        for p in present {
            guard let back = p.returnAudio else { continue }
            let loss = back.feedback.recentLossPercent(nowMs: nowMs)
            worst[back.channels] = max(worst[back.channels], loss)
            guard back.hasOwnEncoder, loss != back.lossPercent, let encoder = try? back.ownEncoder() else { continue }
            if (try? encoder.setLossProtection(lossPercent: loss)) != nil { back.lossPercent = loss }
        }
        for channels in 1...2 where worst[channels] != sharedLoss[channels] {
            guard let encoder = shared[channels] else { continue }
            if (try? encoder.setLossProtection(lossPercent: worst[channels])) != nil {
                sharedLoss[channels] = worst[channels]
            }
        }
    }
}
