import Foundation
import Logging

/// The WebRTC side of the shared media port (protocol/sdp.md, "WebRTC"): STUN checks and DTLS datagrams handed to
/// the participants' transports, their retransmissions and consent on the transport timer, and what a transport's
/// end means for its participant. The table and each transport hold their own locks; nothing here holds the
/// manager's lock while calling them.
extension RoomManager {
    /// Frees a participant's SSRCs and, for WebRTC, its transport (with a close_notify to the browser).
    func detach(_ participant: Participant) {
        router.unregister(participant)
        guard let transport = webRTC.remove(participant) else { return }
        let flight = transport.close()
        if let peer = transport.destination { send(flight, to: peer) }
    }

    private func send(_ datagrams: [[UInt8]], to peer: PeerAddress) {
        guard !datagrams.isEmpty, let send = lock.withLock({ transport }) else { return }
        for datagram in datagrams { send(datagram, peer) }
    }

    /// A STUN datagram (RFC 7983: first byte 0–3): an ICE check for one of the WebRTC transports.
    func ingestSTUN(_ bytes: [UInt8], from peer: PeerAddress) {
        let now = MonotonicClock.nowMs()
        guard let (entry, response, flight) = webRTC.handleSTUN(bytes, from: peer, nowMs: now) else { return }
        // Consent checks keep a participant that only listens from timing out.
        entry.participant.touch(nowMs: now)
        send([response], to: peer)
        send(flight, to: peer)
    }

    /// A DTLS datagram (first byte 20–63): only from an address an ICE check proved.
    func ingestDTLS(_ bytes: [UInt8], from peer: PeerAddress) {
        guard let entry = webRTC.entry(for: peer) else {
            webRTC.countDTLSUnknownSource()
            return
        }
        let (flight, event) = entry.transport.handleDTLS(bytes, from: peer)
        send(flight, to: peer)
        if let event { handle(event, of: entry) }
    }

    /// DTLS retransmissions and ICE consent of every WebRTC transport.
    func tickTransports(nowMs: Int64) {
        for entry in webRTC.entries {
            let (flight, event) = entry.transport.tick(nowMs: nowMs)
            if let peer = entry.transport.destination { send(flight, to: peer) }
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
            removeParticipant(
                room: entry.room, userId: entry.participant.userId, reason: .left, session: entry.participant.sessionID)
        case .failed(let reason):
            webRTC.countHandshake(succeeded: false)
            logger.warning("webrtc transport failed", metadata: metadata.merging(["reason": "\(reason)"]) { $1 })
            removeParticipant(
                room: entry.room, userId: entry.participant.userId, reason: .left, session: entry.participant.sessionID)
        case .consentExpired:
            removeParticipant(
                room: entry.room, userId: entry.participant.userId, reason: .timeout,
                session: entry.participant.sessionID)
        }
    }
}
