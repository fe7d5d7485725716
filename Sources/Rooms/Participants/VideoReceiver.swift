import Foundation
import Synchronization
import Media
import RTP
import Ingest
import Codecs
import Playout
import Logging
import Clocks
import CohostAPI
import Forwarding
import Publishing

/// One participant's camera: its VP8 or H.264 stream (with RFC 4588 retransmissions), the decoder, the pictures
/// waiting for their sound (`VideoPresenter`) and the lip-sync controller, and the keyframe requests and NACKs the
/// stream needs.
///
/// Packets arrive on the UDP thread and canvases are composed on the room's queue: every entry point takes
/// `lock`. The UDP thread only puts each complete frame in a short queue; a thread of the `DecodePool` decodes it
/// outside the lock into a presenter slot reserved for it, so neither the packet path nor a canvas ever waits for a
/// decoder, and the room's limits (`VideoLimits`: picture size, decode budget) are applied there
/// (docs/architecture.md, "Decoding off the packet path"). Without a pool, frames are decoded on the thread that
/// delivers them.
final class VideoReceiver: DecodeJob, @unchecked Sendable {
    let ssrc: UInt32
    /// The SSRC on the wire: `ssrc`, or the one learnt for a stand-in (`NegotiatedStream.learnFromMID`). Feedback
    /// and reports name this one.
    private let wire: Atomic<UInt32>
    var wireSSRC: UInt32 { wire.load(ordering: .relaxed) }
    let codec: String
    /// RFC 4588 retransmissions of the stream, on their own SSRC and payload type.
    let retransmission: (ssrc: UInt32, payloadType: UInt8)?
    private let payloadType: UInt8
    private let keyframeRequest: KeyframeRequestKind
    private let lock = NSLock()
    private var state: State
    private let userId: String
    private let logger: Logger
    private let limits: VideoLimits
    private let pool: DecodePool?
    /// The stream as other participants' slots get it: every packet goes there as it arrives.
    let forwarder: VideoForwarder?
    /// The participant's camera or its screen share.
    let source: StreamSource
    /// The simulcast layer this is (its RID), nil for a single stream.
    let rid: String?
    /// Whether frames go to the decoder: a screen share is decoded only while a region shows it.
    private let decoding: Atomic<Bool>
    /// Touched only by the decode step, which runs for one receiver on one thread at a time.
    private let decoder: any PictureDecoder
    private let isH264: Bool
    /// The size the sender's last sequence parameter set declared (H.264 keyframes may come without one).
    private var declaredSize: (width: Int, height: Int)?

    /// Frames (and bytes) waiting for the decoder; beyond either the sender is ahead of the decode threads. Room for
    /// the burst a jitter buffer releases when a retransmission fills its gap (up to 200 ms of frames).
    static let queueCapacity = 16
    static let queueBytes = 8 << 20
    /// Where complete frames also go while the participant is recorded.
    private let tap = RecordingTap()

    init(
        _ negotiated: NegotiatedStream, userId: String, limits: VideoLimits = VideoLimits(), pool: DecodePool? = nil,
        forwarder: VideoForwarder? = nil, source: StreamSource = .camera, rid: String? = nil, decodes: Bool = true,
        logger: Logger
    ) throws {
        self.forwarder = forwarder
        self.source = source
        self.rid = rid
        decoding = Atomic(decodes)
        ssrc = negotiated.ssrc
        wire = Atomic(negotiated.ssrc)
        codec = negotiated.codec
        payloadType = negotiated.payloadType
        retransmission = negotiated.retransmission
        keyframeRequest = negotiated.keyframeRequest
        self.userId = userId
        self.logger = logger
        self.limits = limits
        self.pool = pool
        let h264 = negotiated.codec.lowercased() == "h264"
        isH264 = h264
        // Video gets the adaptive jitter buffer and NACKs: a lost packet costs a whole frame.
        let stream = InboundStream(
            ssrc: negotiated.ssrc, payloadType: negotiated.payloadType,
            clockRate: negotiated.clockRate,
            depacketizer: h264 ? H264Depacketizer() : VP8Depacketizer() as any Depacketizer,
            maxDelayMs: 80, adaptive: true, nack: true)
        decoder = h264 ? try H264Decoder() : try VP8Decoder()
        state = State(
            stream: stream, presenter: try VideoPresenter(makeSlot: DecodedPicture.init),
            budget: DecodeBudget(budgetMicros: limits.decodeBudgetMs * 1000))
        state.queue.reserveCapacity(Self.queueCapacity)
    }

    /// Pictures decoded so far, and presenter slots made anew because every free one was still held by a canvas
    /// (stays 0 while the room lets go of its tiles in time).
    var pictures: (decoded: Int, slotsReplaced: Int) {
        lock.withLock { (state.framesDecoded, state.presenter.slotsReplaced) }
    }

    /// Whether `ssrc` is this stream's or its retransmissions'.
    func owns(_ ssrc: UInt32) -> Bool { ssrc == self.ssrc || ssrc == retransmission?.ssrc }

    /// What a simulcast layer's selection reads: the size its last keyframe declared (0 before one), when its last
    /// packet came, its bitrate, and how many pictures it decoded.
    struct LayerStatus {
        var width: Int
        var height: Int
        var lastPacketMs: Int64?
        var kbps: Int
        var framesDecoded: Int
    }

    var layerStatus: LayerStatus {
        lock.withLock {
            LayerStatus(
                width: state.keyframeWidth, height: state.keyframeHeight, lastPacketMs: state.lastPacketMs,
                kbps: state.rates.kbps, framesDecoded: state.framesDecoded)
        }
    }

    /// Starts or stops decoding (a screen share while a region shows it); decoding starts again at a keyframe,
    /// which the next feedback round asks for.
    func setDecoding(_ on: Bool) {
        guard decoding.exchange(on, ordering: .relaxed) != on, on else { return }
        withState { s in
            s.waitingForKeyframe = true
            s.decoderWantsKeyframe = true
        }
    }

    /// Starts (or, with nil, stops) handing every complete frame to `recorder`; a recording starts at a keyframe,
    /// which is asked for now. False when another recorder has it.
    func record(into recorder: TrackRecorder?) -> Bool {
        guard tap.attach(recorder) else { return false }
        if recorder != nil { withState { $0.decoderWantsKeyframe = true } }
        return true
    }

    var codecForRecording: TrackRecorder.VideoCodec { isH264 ? .h264 : .vp8 }

    /// Handles one parsed RTP packet of the stream or of its retransmissions: a frame it completes goes to the
    /// decoder's queue.
    func receive(_ packet: RTPPacket, bytes: Int, nowMs: Int64) {
        var packet = packet
        var isRetransmission = false
        if let rtx = retransmission, packet.ssrc == rtx.ssrc {
            // RFC 4588 §4: the payload starts with the original sequence number; the rest is the original payload.
            guard packet.payloadType == rtx.payloadType, packet.payload.count >= 2 else { return }
            packet.sequenceNumber = UInt16(packet.payload[0]) << 8 | UInt16(packet.payload[1])
            packet.payload.removeFirst(2)
            packet.payloadType = payloadType
            packet.ssrc = ssrc
            isRetransmission = true
        }
        guard packet.ssrc == ssrc else { return }
        forwarder?.forward(packet, nowMs: nowMs)
        let schedule = withState { s in
            s.lastPacketMs = nowMs
            let stream = s.stream
            stream.receive(packet, bytes: bytes, nowMs: nowMs, isRetransmission: isRetransmission) { frame in
                enqueue(frame, into: &s)
            }
            return takeScheduling(&s)
        }
        if schedule { run(nowMs: nowMs) }
    }

    /// Releases packets whose reordering wait expired; called by the room every tick. Says when the first picture
    /// was decoded since the last call.
    func drain(nowMs: Int64) -> Participant.Signal? {
        let (schedule, signal) = withState { s -> (Bool, Participant.Signal?) in
            let stream = s.stream
            stream.drain(nowMs: nowMs) { frame in enqueue(frame, into: &s) }
            var signal: Participant.Signal?
            if let first = s.firstPicture, !s.firstPictureAnnounced {
                s.firstPictureAnnounced = true
                signal = .firstVideoFrame(width: first.width, height: first.height)
            }
            return (takeScheduling(&s), signal)
        }
        if schedule { run(nowMs: nowMs) }
        return signal
    }

    /// The picture to show now: the newest decoded one whose audio is playing (lip-sync, see `VideoPresenter`),
    /// or nil (placeholder) when there is none or the stream stalled for `holdMs`. `playout` is the capture time of
    /// the sound being mixed (`AudioReceiver.playout`); pictures captured up to `leadMs` after it are due.
    /// Returns a new lip-sync delay for the voice when the controller wants one; `timing` says what this canvas
    /// learnt of the participant's pictures.
    func currentFrame(
        nowMs: Int64, holdMs: Int64, leadMs: Int64, playout: Double?, syncChangePending: Bool,
        timing: inout PictureTiming
    ) -> (picture: Picture?, syncDelayFrames: Int?) {
        withState { s in
            timing = PictureTiming()
            var syncDelay: Int?
            let due = playout.map { $0 + Double(leadMs) / 1000 }
            let frame = s.presenter.present(playout: due, nowMs: nowMs)
            if let shown = s.presenter.newlyShown {
                // Ready once decoded and, when held for its sound, once that sound came within `leadMs`.
                var ready = nowMs - shown.decodedMs
                if let due, let capture = shown.capture {
                    ready = min(ready, Int64(((due - capture) * 1000).rounded(.down)))
                }
                timing.readyForMs = max(0, ready)
            }
            // Once per picture, on the first canvas after it was decoded, and only for a fresh one (a stalled
            // camera's old picture would read as seconds behind): how far it is ahead of the sound being mixed, as
            // of its decoding (docs/architecture.md, "Lip-sync and the video lead").
            let decodedMs = s.presenter.lastDecodedMs
            if let playout, let newest = s.presenter.newestCapture, s.aheadReportedForMs != decodedMs,
                nowMs - decodedMs <= 50
            {
                s.aheadReportedForMs = decodedMs
                timing.aheadOfSoundMs = Int64(((newest - playout) * 1000).rounded(.down)) + nowMs - decodedMs
                if syncChangePending {
                    s.sync.restartWindow()
                } else {
                    syncDelay = s.sync.observe(lag: playout - newest, nowMs: nowMs)
                }
            }
            guard let frame, nowMs - decodedMs <= holdMs else { return (nil, syncDelay) }
            return (Picture(frame), syncDelay)
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

    /// The keyframe request (join, decode error, unrecoverable loss; at most one per 500 ms) and the NACK for
    /// packets that can still arrive in time, that the stream needs now.
    func requests(nowMs: Int64, serverSSRC: UInt32) -> (keyframe: RTCPPacket?, nack: GenericNACK?) {
        withState { s in
            var request: RTCPPacket?
            var wantKeyframe = s.stream.requestKeyframeIfNeeded(nowMs: nowMs)
            if !wantKeyframe && s.decoderWantsKeyframe {
                wantKeyframe = s.stream.keyframeRequester.request(reason: .decodeError, nowMs: nowMs)
            }
            // Held to keyframes by the decode budget, and the penalty is over: a browser sends none unasked.
            if !wantKeyframe && s.skippedForBudget && !s.budget.isKeyframesOnly(nowMs: nowMs) {
                wantKeyframe = s.stream.keyframeRequester.request(reason: .decodeResumed, nowMs: nowMs)
            }
            // Receivers of the forwarded stream want one: their wishes are coalesced in the forwarder.
            if forwarder?.takeKeyframeRequest(nowMs: nowMs) == true { wantKeyframe = true }
            if wantKeyframe {
                switch keyframeRequest {
                case .pli: request = .pli(PictureLossIndication(senderSSRC: serverSSRC, mediaSSRC: wireSSRC))
                case .fir:
                    s.firSequence &+= 1
                    request = .fir(
                        FullIntraRequest(
                            senderSSRC: serverSSRC,
                            entries: [.init(ssrc: wireSSRC, sequenceNumber: s.firSequence)]))
                }
            }
            let lost = s.stream.nacks(nowMs: nowMs)
            let nack =
                lost.isEmpty ? nil : GenericNACK(senderSSRC: serverSSRC, mediaSSRC: wireSSRC, lostSequenceNumbers: lost)
            return (request, nack)
        }
    }

    func report() -> StreamReport {
        lock.withLock {
            let s = state.stream.stats
            return StreamReport(
                kind: "video", codec: codec, ssrc: wireSSRC, packets: s.packets, bytes: s.bytes,
                lost: s.lost, framesDecoded: state.framesDecoded, decodeErrors: state.decodeErrors,
                fps: state.rates.fps, kbps: state.rates.kbps,
                jitterMs: s.jitter * 1000 / Double(state.stream.clockRate), nacksSent: s.nacksSent,
                keyframeRequests: state.stream.keyframeRequester.sent, concealedMs: 0,
                retransmissions: s.retransmissions, roundTripMs: s.roundTripMs.map { Int($0) },
                lipSyncDelayMs: 0, underruns: 0, trimmedMs: 0,
                pictureBuffersReplaced: state.presenter.slotsReplaced, voiceMarginMs: nil,
                framesTooLarge: state.framesTooLarge, framesOverBudget: state.framesOverBudget,
                framesQueueFull: state.framesQueueFull, decodeBudgetExceeded: state.budget.exceeded,
                decodeCpuMs: Int(state.budget.lastWindowMicros / 1000), source: source.rawValue, rid: rid)
        }
    }

    // MARK: decoding (under `lock`)

    /// Runs `body` on the state in place under `lock` (the presenter's slots stay uniquely referenced, so the
    /// decoder may write into a free one: see `VideoPresenter.freeSlot`).
    private func withState<R>(_ body: (inout State) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&state)
    }

    // MARK: the decode queue (under `lock`)

    private func enqueue(_ frame: EncodedFrame, into s: inout State) {
        tap.video(frame)
        if rid != nil, frame.isKeyframe,
            let size = isH264 ? KeyframeSize.h264(frame.data) : KeyframeSize.vp8(frame.data)
        {
            s.keyframeWidth = size.width
            s.keyframeHeight = size.height
        }
        guard decoding.load(ordering: .relaxed) else { return }
        // A delta frame before a keyframe, or after a frame was lost, would decode into garbage (missing
        // references): the last good picture stays until the next keyframe instead.
        if s.stream.needsKeyframe && !frame.isKeyframe { return }
        if s.dropUntilKeyframe && !frame.isKeyframe {
            s.framesQueueFull += 1
            return
        }
        s.dropUntilKeyframe = false
        if s.queue.count >= Self.queueCapacity || s.queuedBytes + frame.data.count > Self.queueBytes {
            if frame.isKeyframe {
                // A keyframe makes everything before it unnecessary.
                s.framesQueueFull += s.queue.count
                s.queue.removeAll(keepingCapacity: true)
                s.queuedBytes = 0
            } else {
                // The decoder fell behind the sender: the frames already queued still decode, what comes after
                // this one cannot until a keyframe.
                s.framesQueueFull += 1
                s.dropUntilKeyframe = true
                s.decoderWantsKeyframe = true
                return
            }
        }
        s.queue.append(frame)
        s.queuedBytes += frame.data.count
    }

    /// True when frames are queued and nobody is decoding them yet: the caller then runs or schedules the receiver.
    private func takeScheduling(_ s: inout State) -> Bool {
        guard !s.queue.isEmpty, !s.scheduled else { return false }
        s.scheduled = true
        return true
    }

    /// Hands the queue to the pool, or decodes it here when there is none.
    private func run(nowMs: Int64) {
        if let pool { return pool.schedule(self) }
        while decodeOne(nowMs: { nowMs }) {}
    }

    // MARK: decoding (the pool's thread, one frame at a time)

    func decodeNext() -> Bool { decodeOne(nowMs: MonotonicClock.nowMs) }

    private enum Step {
        case skip
        case decode(EncodedFrame, slot: Int, into: DecodedPicture)
    }

    /// Takes the next frame off the queue and decodes it outside the lock, or skips it; true when more are queued.
    private func decodeOne(nowMs clock: () -> Int64) -> Bool {
        let next = withState { s -> EncodedFrame? in
            guard !s.queue.isEmpty else {
                s.scheduled = false
                return nil
            }
            let frame = s.queue.removeFirst()
            s.queuedBytes -= frame.data.count
            return frame
        }
        guard let next else { return false }
        // Read outside the lock: an access unit can be megabytes.
        if next.isKeyframe, let size = isH264 ? KeyframeSize.h264(next.data) : KeyframeSize.vp8(next.data) {
            declaredSize = size
        }
        let step = withState { s in admit(next, into: &s, nowMs: clock()) }
        if case .decode(let frame, let slot, let picture) = step {
            let started = threadCPUMicros()
            let result: Result<Bool, CodecError>
            do throws(CodecError) { result = .success(try decoder.decode(frame.data, into: picture)) } catch {
                result = .failure(error)
            }
            let cost = threadCPUMicros() - started
            withState { s in
                finish(frame, slot: slot, picture: picture, result: result, cost: cost, into: &s, nowMs: clock())
            }
        }
        return withState { s in
            if s.queue.isEmpty { s.scheduled = false }
            return s.scheduled
        }
    }

    /// Whether `frame` is decoded: the keyframe rule, the room's picture size and the decode budget. A frame to decode
    /// gets a reserved presenter slot.
    private func admit(_ frame: EncodedFrame, into s: inout State, nowMs: Int64) -> Step {
        if frame.isKeyframe {
            if let size = declaredSize {
                guard limits.allows(width: size.width, height: size.height) else {
                    refuse(size, into: &s)
                    return .skip
                }
            }
            s.refusedSize = nil
        } else if s.waitingForKeyframe || s.refusedSize != nil {
            if s.refusedSize != nil {
                s.framesTooLarge += 1
            } else if s.skippedForBudget {
                s.framesOverBudget += 1
            }
            return .skip
        }
        switch s.budget.admit(isKeyframe: frame.isKeyframe, nowMs: nowMs) {
        case .decode: break
        case .windowSpent, .keyframesOnly:
            s.framesOverBudget += 1
            s.skippedForBudget = true
            s.waitingForKeyframe = true
            return .skip
        }
        do {
            // A new slot picture is made only when every free one is still held elsewhere (see VideoPresenter).
            let slot = try s.presenter.reserveSlot(makeSlot: DecodedPicture.init)
            return .decode(frame, slot: slot, into: s.presenter.slots[slot])
        } catch {
            s.decodeErrors += 1
            return .skip
        }
    }

    private func refuse(_ size: (width: Int, height: Int), into s: inout State) {
        s.framesTooLarge += 1
        s.waitingForKeyframe = true
        if s.refusedSize.map({ $0 != size }) ?? true {
            logger.warning(
                "video larger than the room allows: refused until a keyframe that fits",
                metadata: [
                    "user": "\(userId)", "size": "\(size.width)x\(size.height)",
                    "max": "\(limits.maxWidth)x\(limits.maxHeight)",
                ])
        }
        s.refusedSize = size
    }

    private func finish(
        _ frame: EncodedFrame, slot: Int, picture: DecodedPicture, result: Result<Bool, CodecError>, cost: Int64,
        into s: inout State, nowMs: Int64
    ) {
        s.budget.charge(micros: cost, nowMs: nowMs)
        switch result {
        case .failure(let error):
            s.presenter.release(slot: slot)
            s.decodeErrors += 1
            s.waitingForKeyframe = true
            s.decoderWantsKeyframe = true
            logger.debug("video decode failed", metadata: ["user": "\(userId)", "error": "\(error)"])
        case .success(false):
            s.presenter.release(slot: slot)
        case .success(true):
            // A stream whose size the headers did not give away is judged by its first picture.
            guard limits.allows(width: picture.width, height: picture.height) else {
                s.presenter.release(slot: slot)
                picture.clear()
                refuse((picture.width, picture.height), into: &s)
                return
            }
            let capture = s.stream.senderClock.ntpSeconds(rtpTimestamp: frame.rtpTimestamp)
            s.presenter.decoded(slot: slot, capture: capture, nowMs: nowMs)
            s.waitingForKeyframe = false
            if frame.isKeyframe { s.decoderWantsKeyframe = false }
            if s.skippedForBudget, frame.isKeyframe { s.skippedForBudget = false }
            s.framesDecoded += 1
            if s.firstPicture == nil { s.firstPicture = (picture.width, picture.height) }
        }
    }
}
