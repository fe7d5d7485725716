import Foundation
import Media
import RTP
import Ingest
import Codecs
import Logging

/// One user's media inside a room: the inbound streams, their decoders, the latest picture and
/// the decoded audio waiting for the mixer.
///
/// Packets arrive on the UDP thread and the mixer reads on the room's queue, so every entry point
/// takes `lock`. Pictures are decoded inline on the packet path (bounded: one frame per complete
/// packet group; the tick then only places them). Voices are decoded when the mixer pulls them
/// (`PendingAudioFrames`): many voice rooms would otherwise put every Opus decode in the server on the
/// one UDP thread.
public final class Participant: @unchecked Sendable {
    public let userId: String
    public let sessionID: Int
    public let joinedAt: Date
    /// Joined with an admin token.
    public let isAdmin: Bool
    let audioSSRC: UInt32?
    let videoSSRC: UInt32?
    /// RFC 4588 retransmissions of the video stream, on their own SSRC and payload type.
    let retransmission: (ssrc: UInt32, payloadType: UInt8)?
    private let keyframeRequest: KeyframeRequestKind
    /// The FIR command sequence number (RFC 5104 §4.3.1.1): one more for every new request.
    private var firSequence: UInt8 = 0
    /// Receiver report blocks of the feedback being built: at most audio and video, reused tick after tick.
    private var reportBlocks: [ReceptionReport] = []

    private let lock = NSLock()
    private var audio: AudioPath?
    private var video: VideoPath?
    /// When the last packet came, behind a lock of its own: the room's once-a-second sweep reads it while holding
    /// the room's lock, and must not wait there for `lock`, which a video decode can hold for milliseconds.
    private let lastPacket: ManagedTime
    public private(set) var muted = false
    public private(set) var gain: Float = 1
    private let logger: Logger

    struct AudioPath {
        let stream: InboundStream
        let codec: String
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
    }

    struct VideoPath {
        let stream: InboundStream
        let codec: String
        let decoder: any PictureDecoder
        var presenter: VideoPresenter<DecodedPicture>
        var sync = LipSyncController()
        /// Set by a decode error: the next feedback round asks for a keyframe.
        var decoderWantsKeyframe = false
        var waitingForKeyframe = true
        var framesDecoded = 0
        var decodeErrors = 0
        var rates = StreamRates()
        /// The decode time of the picture whose spare was last reported (`currentFrame`).
        var spareReportedForMs: Int64 = -1
    }

    /// Something the room should announce after a packet was handled.
    enum Signal { case firstVideoFrame(width: Int, height: Int) }

    /// `decodeChannels`: 1 when the room's programme is mono, so voices are decoded to mono (cheaper) and
    /// stereo senders are downmixed by the decoder; 2 otherwise.
    init(userId: String, sessionID: Int, isAdmin: Bool = false, audio: NegotiatedStream?, video: NegotiatedStream?,
         decodeChannels: Int = 2, nowMs: Int64, logger: Logger) throws {
        self.userId = userId
        self.isAdmin = isAdmin
        self.sessionID = sessionID
        self.joinedAt = Date()
        self.logger = logger
        lastPacket = ManagedTime(nowMs)
        audioSSRC = audio?.ssrc
        videoSSRC = video?.ssrc
        retransmission = video?.retransmission
        keyframeRequest = video?.keyframeRequest ?? .pli
        if let audio {
            let stream = InboundStream(ssrc: audio.ssrc, payloadType: audio.payloadType, clockRate: audio.clockRate,
                                       depacketizer: OpusDepacketizer(), maxDelayMs: 40,
                                       adaptive: true, adaptiveDelay: .audio)
            self.audio = AudioPath(stream: stream, codec: audio.codec, decoder: try OpusDecoder(channels: decodeChannels))
        }
        if let video {
            let h264 = video.codec.lowercased() == "h264"
            // Video gets the adaptive jitter buffer and NACKs: a lost packet costs a whole frame.
            let stream = InboundStream(ssrc: video.ssrc, payloadType: video.payloadType, clockRate: video.clockRate,
                                       depacketizer: h264 ? H264Depacketizer() : VP8Depacketizer() as any Depacketizer,
                                       maxDelayMs: 80, adaptive: true, nack: true)
            let decoder: any PictureDecoder = h264 ? try H264Decoder() : try VP8Decoder()
            self.video = VideoPath(stream: stream, codec: video.codec, decoder: decoder,
                                   presenter: try VideoPresenter(makeSlot: DecodedPicture.init))
        }
    }

    var hasVideo: Bool { videoSSRC != nil }

    /// Video pictures decoded so far, and presenter slots that had to be made anew because every free one was
    /// still held by a canvas (VideoPresenter): the latter stays 0 while the room lets go of its tiles in time.
    var videoPictures: (decoded: Int, slotsReplaced: Int) {
        lock.withLock { (video?.framesDecoded ?? 0, video?.presenter.slotsReplaced ?? 0) }
    }

    /// Decoded audio waiting in this voice's FIFO (frames), for tests.
    var audioBufferedFrames: Int { lock.withLock { audio?.fifo.bufferedFrames ?? 0 } }

    func setMix(muted: Bool?, gain: Float?) {
        lock.withLock {
            if let muted { self.muted = muted }
            if let gain { self.gain = gain }
        }
    }

    /// Handles one parsed RTP packet of this participant.
    func receive(_ packet: RTPPacket, bytes: Int, nowMs: Int64) -> Signal? {
        lock.lock()
        defer { lock.unlock() }
        lastPacket.set(nowMs)
        // Each path is moved out (`audio = nil`) while it is worked on, so its FIFO ring and picture
        // slots stay uniquely referenced: writing them then copies nothing (no copy-on-write per packet).
        if packet.ssrc == audioSSRC, var path = audio {
            audio = nil
            // Frames are queued as the stream completes them (a callback, not a returned array: no
            // allocation per packet on this hot path) and decoded at the mixer's pull.
            let stream = path.stream
            stream.receive(packet, bytes: bytes, nowMs: nowMs) { frame in queueAudio(frame, path: &path, nowMs: nowMs) }
            audio = path
            return nil
        }
        var packet = packet
        var isRetransmission = false
        if let rtx = retransmission, packet.ssrc == rtx.ssrc, let videoSSRC {
            // RFC 4588 §4: the payload starts with the original sequence number; the rest is the original payload.
            // Only the payload type is read: a copy of the whole path would share the presenter's slots and make
            // every free one look held to the decoder (VideoPresenter.freeSlot).
            guard packet.payloadType == rtx.payloadType, packet.payload.count >= 2,
                  let originalPayloadType = video?.stream.payloadType else { return nil }
            packet.sequenceNumber = UInt16(packet.payload[0]) << 8 | UInt16(packet.payload[1])
            packet.payload.removeFirst(2)
            packet.payloadType = originalPayloadType
            packet.ssrc = videoSSRC
            isRetransmission = true
        }
        if packet.ssrc == videoSSRC, var path = video {
            video = nil
            var signal: Signal?
            let stream = path.stream
            stream.receive(packet, bytes: bytes, nowMs: nowMs, isRetransmission: isRetransmission) { frame in
                signal = decodeVideo(frame, path: &path, nowMs: nowMs) ?? signal
            }
            video = path
            return signal
        }
        return nil
    }

    /// Releases packets whose reordering wait expired; called by the room every tick.
    func drain(nowMs: Int64) -> Signal? {
        lock.lock()
        defer { lock.unlock() }
        if var path = audio {
            audio = nil
            // Callback delivery, as in `receive`: nothing allocated per tick.
            let stream = path.stream
            stream.drain(nowMs: nowMs) { frame in queueAudio(frame, path: &path, nowMs: nowMs) }
            audio = path
        }
        var signal: Signal?
        if var path = video {
            video = nil
            let stream = path.stream
            stream.drain(nowMs: nowMs) { frame in signal = decodeVideo(frame, path: &path, nowMs: nowMs) ?? signal }
            video = path
        }
        return signal
    }

    /// Gaps longer than this are a pause or a restart, not loss: they are not concealed.
    static let maxConcealedFrames = AudioFormat.blockFrames * 10

    private func queueAudio(_ frame: EncodedFrame, path: inout AudioPath, nowMs: Int64) {
        if path.pending.isFull, let oldest = path.pending.popFirst() {
            decodeAudio(oldest.data, rtpTimestamp: oldest.rtpTimestamp, path: &path, nowMs: oldest.releasedMs)
        }
        path.pending.push(frame, releasedMs: nowMs)
    }

    /// Decodes every queued frame into the FIFO, oldest first, each as of the time it was released.
    private func decodePending(path: inout AudioPath) {
        while let frame = path.pending.popFirst() {
            decodeAudio(frame.data, rtpTimestamp: frame.rtpTimestamp, path: &path, nowMs: frame.releasedMs)
        }
    }

    private func decodeAudio(_ data: [UInt8], rtpTimestamp: UInt32, path: inout AudioPath, nowMs: Int64) {
        let elapsedMs = max(0, nowMs - (path.lastDecodeMs ?? nowMs))
        path.lastDecodeMs = nowMs
        path.concealCredit = Int(min(Int64(Self.maxConcealedFrames),
                                     Int64(path.concealCredit) + elapsedMs * Int64(AudioFormat.sampleRate) / 1000))
        do {
            // Opus DTX: a sender that stops talking sends a 1–2 byte "no speech" frame and then nothing until
            // speech resumes. That frame becomes silence without waking the decoder, and the gap after it is
            // a pause, not loss: nothing to conceal (PLC over seconds of DTX was the cost of a quiet speaker).
            if let frames = OpusSilence.frames(of: data) {
                path.fifo.writeSilence(frames: frames, arrivedMs: nowMs)
                path.expectedTimestamp = rtpTimestamp &+ UInt32(frames)
                path.afterDTX = true
                path.silentFrames += 1
                return
            }
            if let expected = path.expectedTimestamp, !path.afterDTX {
                let gap = Int(Int32(bitPattern: rtpTimestamp &- expected))
                if gap > 0 && gap <= path.concealCredit {
                    path.concealCredit -= gap
                    try conceal(gap, before: data, path: &path, nowMs: nowMs)
                }
            }
            path.afterDTX = false
            let frames = try path.decoder.decode(data, into: &path.scratch)
            path.fifo.write(path.scratch, frames: frames, channels: path.decoder.channels, arrivedMs: nowMs)
            path.expectedTimestamp = rtpTimestamp &+ UInt32(frames)
            path.framesDecoded += 1
        } catch {
            path.decodeErrors += 1
            logger.debug("opus decode failed", metadata: ["user": "\(userId)", "error": "\(error)"])
        }
    }

    /// Fills a gap of `frames` lost samples so the mix never hears silence-then-burst: Opus PLC for all
    /// but the last 20 ms, which comes from the next packet's in-band FEC when it carries some.
    private func conceal(_ frames: Int, before next: [UInt8], path: inout AudioPath, nowMs: Int64) throws(CodecError) {
        var remaining = frames
        while remaining > AudioFormat.blockFrames {
            let chunk = min(remaining - AudioFormat.blockFrames, AudioFormat.blockFrames * 6)
            let n = try path.decoder.conceal(frames: chunk, into: &path.scratch)
            path.fifo.write(path.scratch, frames: n, channels: path.decoder.channels, arrivedMs: nowMs)
            remaining -= chunk
        }
        let n = try path.decoder.recover(frames: remaining, from: next, into: &path.scratch)
        path.fifo.write(path.scratch, frames: n, channels: path.decoder.channels, arrivedMs: nowMs)
        path.concealedFrames += frames
    }

    private func decodeVideo(_ frame: EncodedFrame, path: inout VideoPath, nowMs: Int64) -> Signal? {
        // A delta frame before a keyframe, or after a frame was lost, would decode into garbage
        // (missing references): hold the last good picture until the next keyframe instead.
        if (path.waitingForKeyframe || path.stream.needsKeyframe) && !frame.isKeyframe { return nil }
        let first = !path.presenter.hasPicture
        let decoder = path.decoder
        let slot: Int
        do {
            // A new slot picture is made only when every free one is still held elsewhere (see VideoPresenter).
            slot = try path.presenter.freeSlot(makeSlot: DecodedPicture.init)
            guard try decoder.decode(frame.data, into: path.presenter.slots[slot]) else { return nil }
        } catch {
            path.decodeErrors += 1
            path.waitingForKeyframe = true
            path.decoderWantsKeyframe = true
            logger.debug("video decode failed", metadata: ["user": "\(userId)", "error": "\(error)"])
            return nil
        }
        let capture = path.stream.senderClock.ntpSeconds(rtpTimestamp: frame.rtpTimestamp)
        path.presenter.decoded(slot: slot, capture: capture, nowMs: nowMs)
        path.waitingForKeyframe = false
        if frame.isKeyframe { path.decoderWantsKeyframe = false }
        path.framesDecoded += 1
        let picture = path.presenter.slots[slot]
        return first ? .firstVideoFrame(width: picture.width, height: picture.height) : nil
    }

    /// Copies the next 20 ms block into `output`, scaled by the mix gain; false when there is none.
    func pullAudio(into output: inout [Float], nowMs: Int64, catchingUp: Bool = false) -> (ok: Bool, gain: Float) {
        lock.lock()
        defer { lock.unlock() }
        guard var path = audio else { return (false, 0) }
        audio = nil
        decodePending(path: &path)
        let ok = path.fifo.read(into: &output, frames: AudioFormat.blockFrames, nowMs: nowMs, catchingUp: catchingUp)
        if ok, let next = path.expectedTimestamp {
            // The FIFO holds the decoded audio up to `next`, contiguously (gaps are concealed).
            path.lastPulledTimestamp = next &- UInt32(path.fifo.bufferedFrames + AudioFormat.blockFrames)
            path.lastPullMs = nowMs
        }
        audio = path
        return (ok && !muted, gain)
    }

    /// The sender's capture time (NTP seconds) of the audio the mixer plays at `nowMs`; nil without
    /// a sender report on the audio stream or before the first block.
    private func audioPlayout(nowMs: Int64) -> Double? {
        guard let a = audio, let rtp = a.lastPulledTimestamp,
              let capture = a.stream.senderClock.ntpSeconds(rtpTimestamp: rtp) else { return nil }
        return capture + Double(nowMs - a.lastPullMs) / 1000
    }

    /// The picture to show now: the newest decoded one whose audio is playing (lip-sync, see
    /// VideoPresenter), or nil (placeholder) when there is none or the stream stalled for `holdMs`.
    /// `leadMs`: pictures captured up to that much after the sound being mixed are due (the canvas is stamped
    /// ahead by the `VideoLead`, plus half a frame of rounding). `timing` says what this canvas learnt of the
    /// participant's pictures.
    func currentFrame(nowMs: Int64, holdMs: Int64, leadMs: Int64 = 0, timing: inout PictureTiming) -> Picture? {
        lock.lock()
        defer { lock.unlock() }
        timing = PictureTiming()
        let playout = audioPlayout(nowMs: nowMs)
        let due = playout.map { $0 + Double(leadMs) / 1000 }
        // Mutated in place through the optional: no copy of the presenter's queue per tick.
        let frame = video?.presenter.present(playout: due, nowMs: nowMs)
        if let shown = video?.presenter.newlyShown {
            // Ready once decoded and, when held for its sound, once that sound came within `leadMs`.
            var ready = nowMs - shown.decodedMs
            if let due, let capture = shown.capture {
                ready = min(ready, Int64(((due - capture) * 1000).rounded(.down)))
            }
            timing.readyForMs = max(0, ready)
        }
        // Once per picture, on the first canvas after it was decoded: how far it is ahead of the sound being mixed.
        // Only a fresh picture says that: an old one (a stalled camera, a tile placed again) would read as seconds
        // behind and pull everyone's lead to zero.
        if let playout, let newest = video?.presenter.newestCapture, let decodedMs = video?.presenter.lastDecodedMs,
           video?.spareReportedForMs != decodedMs, nowMs - decodedMs <= 50 {
            video?.spareReportedForMs = decodedMs
            // As of its decoding, not of this canvas: what the lead may reach is how far the picture was ahead when
            // it could first be shown; the wait for this canvas comes on top (and shrinks as CanvasPhase lines the
            // canvases up). Measured here, the lead pulled the canvases toward where held pictures fell due and
            // stayed low (0–7 ms with 30–40 ms to spare on the latency benchmark).
            timing.spareMs = Int64(((newest - playout) * 1000).rounded(.down)) + nowMs - decodedMs
            if audio?.fifo.pendingSyncChangeFrames ?? 0 != 0 {
                video?.sync.restartWindow()
            } else if let delay = video?.sync.observe(lag: playout - newest, nowMs: nowMs), var path = audio {
                // The FIFO may cut at once (before its prebuffer fills): decode what is queued first, so the cut is whole.
                audio = nil
                decodePending(path: &path)
                path.fifo.setSyncDelay(frames: delay)
                audio = path
            }
        }
        guard let frame,
              let decodedMs = video?.presenter.lastDecodedMs, nowMs - decodedMs <= holdMs else { return nil }
        return Picture(frame)
    }

    func reports() -> [StreamReport] {
        lock.lock()
        defer { lock.unlock() }
        var out: [StreamReport] = []
        if let a = audio {
            let s = a.stream.stats
            out.append(StreamReport(kind: "audio", codec: a.codec, ssrc: a.stream.ssrc, packets: s.packets, bytes: s.bytes,
                                    lost: s.lost, framesDecoded: a.framesDecoded, decodeErrors: a.decodeErrors,
                                    fps: a.rates.fps, kbps: a.rates.kbps,
                                    jitterMs: s.jitter * 1000 / Double(a.stream.clockRate), nacksSent: 0, keyframeRequests: 0,
                                    concealedMs: a.concealedFrames * 1000 / AudioFormat.sampleRate, retransmissions: 0,
                                    roundTripMs: nil,
                                    lipSyncDelayMs: a.fifo.syncDelayFrames * 1000 / AudioFormat.sampleRate,
                                    underruns: a.fifo.underruns, trimmedMs: a.fifo.trimmedFrames * 1000 / AudioFormat.sampleRate,
                                    pictureBuffersReplaced: 0, voiceMarginMs: a.fifo.margin.lastWindowMinMs))
        }
        if let v = video {
            let s = v.stream.stats
            out.append(StreamReport(kind: "video", codec: v.codec, ssrc: v.stream.ssrc, packets: s.packets, bytes: s.bytes,
                                    lost: s.lost, framesDecoded: v.framesDecoded, decodeErrors: v.decodeErrors,
                                    fps: v.rates.fps, kbps: v.rates.kbps,
                                    jitterMs: s.jitter * 1000 / Double(v.stream.clockRate), nacksSent: s.nacksSent,
                                    keyframeRequests: v.stream.keyframeRequester.sent, concealedMs: 0,
                                    retransmissions: s.retransmissions, roundTripMs: s.roundTripMs.map { Int($0) },
                                    lipSyncDelayMs: 0, underruns: 0, trimmedMs: 0,
                                    pictureBuffersReplaced: v.presenter.slotsReplaced, voiceMarginMs: nil))
        }
        return out
    }

    // MARK: RTCP

    /// The RTCP this participant's sources should get now, appended to `out` as one compound datagram: a
    /// keyframe request (join, decode error, unrecoverable loss; at most one per 500 ms), NACKs for video
    /// packets that can still arrive in time, and receiver reports when `reportDue`. Nothing is appended when
    /// there is nothing to say. Runs on every audio tick: the report blocks go through `reportBlocks` (reused)
    /// and the packets straight into `out`, so a steady stream allocates nothing here.
    func feedback(nowMs: Int64, serverSSRC: UInt32, reportDue: Bool, into out: inout [UInt8]) {
        lock.lock()
        defer { lock.unlock() }
        reportBlocks.removeAll(keepingCapacity: true)
        if reportDue {
            if var a = audio {
                a.rates.update(nowMs: nowMs, bytes: a.stream.stats.bytes, frames: a.framesDecoded)
                audio = a
                reportBlocks.append(a.stream.receptionReport(nowMs: nowMs))
            }
            if var v = video {
                v.rates.update(nowMs: nowMs, bytes: v.stream.stats.bytes, frames: v.framesDecoded)
                video = v
                reportBlocks.append(v.stream.receptionReport(nowMs: nowMs))
            }
        }
        var request: RTCPPacket?
        var nack: GenericNACK?
        if let v = video {
            var wantKeyframe = v.stream.requestKeyframeIfNeeded(nowMs: nowMs)
            if !wantKeyframe && v.decoderWantsKeyframe {
                wantKeyframe = v.stream.keyframeRequester.request(reason: .decodeError, nowMs: nowMs)
            }
            if wantKeyframe {
                switch keyframeRequest {
                case .pli: request = .pli(PictureLossIndication(senderSSRC: serverSSRC, mediaSSRC: v.stream.ssrc))
                case .fir:
                    firSequence &+= 1
                    request = .fir(FullIntraRequest(senderSSRC: serverSSRC,
                                                    entries: [.init(ssrc: v.stream.ssrc, sequenceNumber: firSequence)]))
                }
            }
            let lost = v.stream.nacks(nowMs: nowMs)
            if !lost.isEmpty { nack = GenericNACK(senderSSRC: serverSSRC, mediaSSRC: v.stream.ssrc, lostSequenceNumbers: lost) }
        }
        guard reportDue || request != nil || nack != nil else { return }
        // A compound RTCP packet starts with a report (RFC 3550 §6.1), empty when none is due.
        ReceiverReport(ssrc: serverSSRC, reports: reportBlocks).append(to: &out)
        request?.append(to: &out)
        nack?.append(to: &out)
    }

    /// A sender report from one of this participant's sources: for LSR/DLSR and the media clock.
    func noteSenderReport(_ sr: SenderReport, nowMs: Int64) {
        lock.lock()
        defer { lock.unlock() }
        if sr.ssrc == audioSSRC { audio?.stream.noteSenderReport(ntp: sr.ntpTimestamp, rtpTimestamp: sr.rtpTimestamp, nowMs: nowMs) }
        if sr.ssrc == videoSSRC { video?.stream.noteSenderReport(ntp: sr.ntpTimestamp, rtpTimestamp: sr.rtpTimestamp, nowMs: nowMs) }
    }

    func idleMilliseconds(nowMs: Int64) -> Int64 { nowMs - lastPacket.value }
}

/// What a canvas learnt of one participant's pictures (`Participant.currentFrame`).
struct PictureTiming {
    /// Set on the first canvas after a new picture was decoded: how far that picture was ahead of the sound being
    /// mixed when it was decoded (ms; what `VideoLead` may use).
    var spareMs: Int64?
    /// Set on the canvas that shows a picture for the first time: how long it had been ready, decoded and due
    /// (ms; what `CanvasPhase` lines the canvases up with).
    var readyForMs: Int64?
}
