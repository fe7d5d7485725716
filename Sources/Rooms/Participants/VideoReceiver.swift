import Foundation
import Media
import RTP
import Ingest
import Codecs
import Playout
import Logging

/// One participant's camera: its VP8 or H.264 stream (with RFC 4588 retransmissions), the decoder, the pictures
/// waiting for their sound (`VideoPresenter`) and the lip-sync controller, and the keyframe requests and NACKs the
/// stream needs.
///
/// Packets arrive on the UDP thread and canvases are composed on the room's queue: every entry point takes
/// `lock`. Pictures are decoded on the packet path (one frame per complete packet group), so a canvas only
/// places them.
final class VideoReceiver: @unchecked Sendable {
    let ssrc: UInt32
    let codec: String
    /// RFC 4588 retransmissions of the stream, on their own SSRC and payload type.
    let retransmission: (ssrc: UInt32, payloadType: UInt8)?
    private let payloadType: UInt8
    private let keyframeRequest: KeyframeRequestKind
    private let lock = NSLock()
    private var state: State
    private let userId: String
    private let logger: Logger

    private struct State {
        let stream: InboundStream
        let decoder: any PictureDecoder
        var presenter: VideoPresenter<DecodedPicture>
        var sync = LipSyncController()
        /// Set by a decode error: the next feedback round asks for a keyframe.
        var decoderWantsKeyframe = false
        var waitingForKeyframe = true
        var framesDecoded = 0
        var decodeErrors = 0
        var rates = StreamRates()
        /// The decode time of the picture whose ahead-of-sound figure was last reported (`currentFrame`).
        var aheadReportedForMs: Int64 = -1
        /// The FIR command sequence number (RFC 5104 §4.3.1.1): one more for every new request.
        var firSequence: UInt8 = 0
    }

    init(_ negotiated: NegotiatedStream, userId: String, logger: Logger) throws {
        ssrc = negotiated.ssrc
        codec = negotiated.codec
        payloadType = negotiated.payloadType
        retransmission = negotiated.retransmission
        keyframeRequest = negotiated.keyframeRequest
        self.userId = userId
        self.logger = logger
        let h264 = negotiated.codec.lowercased() == "h264"
        // Video gets the adaptive jitter buffer and NACKs: a lost packet costs a whole frame.
        let stream = InboundStream(
            ssrc: negotiated.ssrc, payloadType: negotiated.payloadType,
            clockRate: negotiated.clockRate,
            depacketizer: h264 ? H264Depacketizer() : VP8Depacketizer() as any Depacketizer,
            maxDelayMs: 80, adaptive: true, nack: true)
        let decoder: any PictureDecoder = h264 ? try H264Decoder() : try VP8Decoder()
        state = State(stream: stream, decoder: decoder, presenter: try VideoPresenter(makeSlot: DecodedPicture.init))
    }

    /// Pictures decoded so far, and presenter slots made anew because every free one was still held by a canvas
    /// (stays 0 while the room lets go of its tiles in time).
    var pictures: (decoded: Int, slotsReplaced: Int) {
        lock.withLock { (state.framesDecoded, state.presenter.slotsReplaced) }
    }

    /// Handles one parsed RTP packet of the stream or of its retransmissions; says when it decoded the first picture.
    func receive(_ packet: RTPPacket, bytes: Int, nowMs: Int64) -> Participant.Signal? {
        var packet = packet
        var isRetransmission = false
        if let rtx = retransmission, packet.ssrc == rtx.ssrc {
            // RFC 4588 §4: the payload starts with the original sequence number; the rest is the original payload.
            guard packet.payloadType == rtx.payloadType, packet.payload.count >= 2 else { return nil }
            packet.sequenceNumber = UInt16(packet.payload[0]) << 8 | UInt16(packet.payload[1])
            packet.payload.removeFirst(2)
            packet.payloadType = payloadType
            packet.ssrc = ssrc
            isRetransmission = true
        }
        guard packet.ssrc == ssrc else { return nil }
        return withState { s in
            var signal: Participant.Signal?
            let stream = s.stream
            stream.receive(packet, bytes: bytes, nowMs: nowMs, isRetransmission: isRetransmission) { frame in
                signal = decode(frame, into: &s, nowMs: nowMs) ?? signal
            }
            return signal
        }
    }

    /// Releases packets whose reordering wait expired; called by the room every tick.
    func drain(nowMs: Int64) -> Participant.Signal? {
        withState { s in
            var signal: Participant.Signal?
            let stream = s.stream
            stream.drain(nowMs: nowMs) { frame in signal = decode(frame, into: &s, nowMs: nowMs) ?? signal }
            return signal
        }
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
        withState { s in
            let stream = s.stream
            return stream.receptionReport(nowMs: nowMs, updating: &s.rates, framesDecoded: s.framesDecoded)
        }
    }

    /// The keyframe request (join, decode error, unrecoverable loss; at most one per 500 ms) and the NACK for
    /// packets that can still arrive in time, that the stream needs now.
    func requests(nowMs: Int64, serverSSRC: UInt32) -> (keyframe: RTCPPacket?, nack: GenericNACK?) {
        withState { s in
            var request: RTCPPacket?
            var wantKeyframe = s.stream.requestKeyframeIfNeeded(nowMs: nowMs)
            if !wantKeyframe && s.decoderWantsKeyframe {
                wantKeyframe = s.stream.keyframeRequester.request(reason: .decodeError, nowMs: nowMs)
            }
            if wantKeyframe {
                switch keyframeRequest {
                case .pli: request = .pli(PictureLossIndication(senderSSRC: serverSSRC, mediaSSRC: ssrc))
                case .fir:
                    s.firSequence &+= 1
                    request = .fir(
                        FullIntraRequest(
                            senderSSRC: serverSSRC,
                            entries: [.init(ssrc: ssrc, sequenceNumber: s.firSequence)]))
                }
            }
            let lost = s.stream.nacks(nowMs: nowMs)
            let nack =
                lost.isEmpty ? nil : GenericNACK(senderSSRC: serverSSRC, mediaSSRC: ssrc, lostSequenceNumbers: lost)
            return (request, nack)
        }
    }

    func report() -> StreamReport {
        lock.withLock {
            let s = state.stream.stats
            return StreamReport(
                kind: "video", codec: codec, ssrc: ssrc, packets: s.packets, bytes: s.bytes,
                lost: s.lost, framesDecoded: state.framesDecoded, decodeErrors: state.decodeErrors,
                fps: state.rates.fps, kbps: state.rates.kbps,
                jitterMs: s.jitter * 1000 / Double(state.stream.clockRate), nacksSent: s.nacksSent,
                keyframeRequests: state.stream.keyframeRequester.sent, concealedMs: 0,
                retransmissions: s.retransmissions, roundTripMs: s.roundTripMs.map { Int($0) },
                lipSyncDelayMs: 0, underruns: 0, trimmedMs: 0,
                pictureBuffersReplaced: state.presenter.slotsReplaced, voiceMarginMs: nil)
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

    private func decode(_ frame: EncodedFrame, into s: inout State, nowMs: Int64) -> Participant.Signal? {
        // A delta frame before a keyframe, or after a frame was lost, would decode into garbage
        // (missing references): hold the last good picture until the next keyframe instead.
        if (s.waitingForKeyframe || s.stream.needsKeyframe) && !frame.isKeyframe { return nil }
        let first = !s.presenter.hasPicture
        let slot: Int
        do {
            // A new slot picture is made only when every free one is still held elsewhere (see VideoPresenter).
            slot = try s.presenter.freeSlot(makeSlot: DecodedPicture.init)
            guard try s.decoder.decode(frame.data, into: s.presenter.slots[slot]) else { return nil }
        } catch {
            s.decodeErrors += 1
            s.waitingForKeyframe = true
            s.decoderWantsKeyframe = true
            logger.debug("video decode failed", metadata: ["user": "\(userId)", "error": "\(error)"])
            return nil
        }
        let capture = s.stream.senderClock.ntpSeconds(rtpTimestamp: frame.rtpTimestamp)
        s.presenter.decoded(slot: slot, capture: capture, nowMs: nowMs)
        s.waitingForKeyframe = false
        if frame.isKeyframe { s.decoderWantsKeyframe = false }
        s.framesDecoded += 1
        let picture = s.presenter.slots[slot]
        return first ? .firstVideoFrame(width: picture.width, height: picture.height) : nil
    }
}
