import Foundation
import Logging
import RTP
import Clocks

/// The shared media port (RFC 7983 demux): STUN checks and DTLS datagrams to the participants' WebRTC transports
/// (protocol/sdp.md, "WebRTC"), RTP and RTCP through the SSRC table to their participants, and the one way out, the
/// media socket's send, for feedback, return streams and handshakes. The router, the table and each transport hold
/// their own locks; `lock` guards only the send closure and is never held while calling anything.
public final class MediaDemux: @unchecked Sendable {
    /// Sends one datagram; installed by the UDP endpoint once its socket is bound.
    public typealias DatagramSender = @Sendable ([UInt8], PeerAddress) -> Void
    /// A participant's session ended by its transport (closed, failed, consent expired) or by an RTCP BYE: in
    /// `room` when the transport knows it.
    typealias SessionEnd = @Sendable (_ participant: Participant, _ room: String?, _ reason: LeaveReason) -> Void

    let router = StreamRouter()
    let webRTC = WebRTCTable()
    private let acceptsWebRTC: Bool
    private let logger: Logger
    private let lock = NSLock()
    private var sender: DatagramSender?
    private var sessionEnd: SessionEnd?

    init(acceptsWebRTC: Bool, logger: Logger) {
        self.acceptsWebRTC = acceptsWebRTC
        self.logger = logger
        router.transportOwner = { [webRTC] peer in webRTC.entry(for: peer)?.participant }
    }

    /// Lets the rooms send through the media socket.
    public func attach(_ send: @escaping DatagramSender) { lock.withLock { sender = send } }

    func onSessionEnd(_ handler: @escaping SessionEnd) { lock.withLock { sessionEnd = handler } }

    // MARK: in

    /// Counts a datagram the UDP layer dropped before `ingest` (cut short by its receive slot, or not from IP)
    /// as malformed, where `cohost_udp_dropped{reason="malformed"}` shows it.
    public func countMalformed() { router.countMalformed() }

    /// Entry point for every UDP datagram (RTP and RTCP, either port). `scratch` is the caller's (one per socket),
    /// so parsing and SRTP reuse its buffers and a datagram allocates nothing in steady state.
    public func ingest(_ bytes: [UInt8], from peer: PeerAddress, scratch: inout DatagramScratch) {
        // RFC 7983: the first byte tells STUN (0–3) and DTLS (20–63) from RTP and RTCP (128–191).
        if let first = bytes.first, first < 64, acceptsWebRTC {
            if first < 4 { return ingestSTUN(bytes, from: peer) }
            if first >= 20 { return ingestDTLS(bytes, from: peer) }
        }
        switch router.route(bytes, from: peer, scratch: &scratch) {
        case .dropped:
            return
        case let .rtp(participant, size):
            participant.receive(scratch.packet, bytes: size, nowMs: MonotonicClock.nowMs())
        case let .rtcp(participant, packets):
            let now = MonotonicClock.nowMs()
            participant.touch(nowMs: now)
            for packet in packets {
                switch packet {
                case .senderReport(let sr):
                    participant.noteSenderReport(sr, nowMs: now)
                    if !sr.reports.isEmpty {
                        participant.noteReceptionReports(sr.reports, nowMs: now, ntpNow: NTPTime.now())
                    }
                case .receiverReport(let rr) where !rr.reports.isEmpty:
                    participant.noteReceptionReports(rr.reports, nowMs: now, ntpNow: NTPTime.now())
                case .pli, .fir, .nack, .remb:
                    participant.noteViewFeedback(packet)
                case .bye:
                    end(participant, room: nil, reason: .left)
                default: break
                }
            }
        }
    }

    /// A STUN datagram (first byte 0–3): an ICE check for one of the WebRTC transports.
    private func ingestSTUN(_ bytes: [UInt8], from peer: PeerAddress) {
        let now = MonotonicClock.nowMs()
        guard let (entry, response, flight) = webRTC.handleSTUN(bytes, from: peer, nowMs: now) else { return }
        // Checks and consent answers keep a participant that only listens from timing out.
        entry.participant.touch(nowMs: now)
        if !response.isEmpty { send([response], to: peer) }
        send(flight, to: peer)
    }

    /// A DTLS datagram (first byte 20–63): only from an address an ICE check proved.
    private func ingestDTLS(_ bytes: [UInt8], from peer: PeerAddress) {
        guard let entry = webRTC.entry(for: peer) else {
            webRTC.countDTLSUnknownSource()
            return
        }
        let (flight, event) = entry.transport.handleDTLS(bytes, from: peer)
        send(flight, to: peer)
        if let event { handle(event, of: entry) }
    }

    /// DTLS retransmissions and ICE consent of every WebRTC transport; 20 times a second (OpenSSL's handshake
    /// timers start at 1 s).
    public func tickTransports(nowMs: Int64) {
        for entry in webRTC.entries {
            let (flight, event) = entry.transport.tick(nowMs: nowMs)
            if let peer = entry.transport.destination { send(flight, to: peer) }
            if let check = entry.transport.consentCheck(nowMs: nowMs) {
                send([check.bytes], to: check.to)
                webRTC.countConsentCheck()
            }
            if let event { handle(event, of: entry) }
        }
    }

    private func handle(_ event: WebRTCTransport.Event, of entry: WebRTCTable.Entry) {
        let metadata: Logger.Metadata = ["room": "\(entry.room)", "user": "\(entry.participant.userId)"]
        switch event {
        case .connected:
            webRTC.countHandshake(succeeded: true)
            logger.info("webrtc connected", metadata: metadata)
            // The sender starts with a keyframe request answered at once, not after the first loss.
            entry.participant.touch(nowMs: MonotonicClock.nowMs())
        case .closed:
            end(entry.participant, room: entry.room, reason: .left)
        case .failed(let reason):
            webRTC.countHandshake(succeeded: false)
            logger.warning("webrtc transport failed", metadata: metadata.merging(["reason": "\(reason)"]) { $1 })
            end(entry.participant, room: entry.room, reason: .left)
        case .consentExpired:
            end(entry.participant, room: entry.room, reason: .timeout)
        }
    }

    private func end(_ participant: Participant, room: String?, reason: LeaveReason) {
        lock.withLock { sessionEnd }?(participant, room, reason)
    }

    // MARK: participants

    /// Registers a participant's SSRCs (nil) or names the one already taken by another participant.
    func register(_ entries: [StreamRouter.Entry], room: String, participant: Participant) -> UInt32? {
        router.register(entries, room: room, participant: participant)
    }

    /// Frees a participant's SSRCs and, for WebRTC, its transport (with a close_notify to the browser).
    func detach(_ participant: Participant) {
        router.unregister(participant)
        guard let transport = webRTC.remove(participant) else { return }
        let flight = transport.close()
        if let peer = transport.destination { send(flight, to: peer) }
    }

    // MARK: out

    private func send(_ datagrams: [[UInt8]], to peer: PeerAddress) {
        guard !datagrams.isEmpty, let send = lock.withLock({ sender }) else { return }
        for datagram in datagrams { send(datagram, peer) }
    }

    /// Protects and sends a participant's RTCP feedback (one compound datagram) to its latched address.
    /// Once a second per participant and more under loss: written without closures or temporary arrays, SRTCP
    /// into the room's `scratch`, so reports allocate nothing here.
    func sendFeedback(_ participant: Participant, _ compound: [UInt8], _ scratch: inout [UInt8]) {
        lock.lock()
        let send = sender
        lock.unlock()
        guard let send else { return }
        // To the first of the participant's streams that has latched an address (video may start late).
        if let ssrc = participant.videoSSRC, let route = router.protectFeedback(compound, about: ssrc, into: &scratch) {
            return send(route.protected ? scratch : compound, route.to)
        }
        if let ssrc = participant.audioSSRC, let route = router.protectFeedback(compound, about: ssrc, into: &scratch) {
            send(route.protected ? scratch : compound, route.to)
        }
    }

    /// Sends one datagram of a participant's return stream to where its media comes from.
    func sendReturn(_ participant: Participant, _ kind: NegotiatedStream.Kind, _ bytes: [UInt8]) {
        lock.lock()
        let send = sender
        lock.unlock()
        guard let send, let peer = router.returnDestination(of: participant, kind: kind) else { return }
        send(bytes, peer)
    }
}
