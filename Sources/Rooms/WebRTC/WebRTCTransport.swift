import DTLS
import Foundation
import ICE

/// One WebRTC participant's transport on the shared media port: its ICE-lite agent and its DTLS association
/// (RFC 8842). STUN checks prove an address; only proven addresses may speak DTLS or SRTP to it; the nominated
/// one is where Cohost sends. Called from the UDP thread (datagrams), the transport timer (retransmissions,
/// consent) and the senders (the destination), all under one lock.
final class WebRTCTransport: @unchecked Sendable {
    enum Event: Equatable {
        case connected
        /// close_notify from the peer.
        case closed
        case failed(String)
        /// No valid check for 30 s (RFC 7675).
        case consentExpired
    }

    let keys = TransportKeys()
    /// The current local credentials (new ones after an ICE restart).
    var localUfrag: String { lock.withLock { agent.localUfrag } }
    var localPassword: String { lock.withLock { agent.localPassword } }
    let parameters: WebRTCParameters
    private let lock = NSLock()
    private var agent: ICELiteAgent<PeerAddress>
    private let dtls: DTLSEndpoint
    /// Addresses that passed a check, most recent last (a few: a phone between networks, a restart).
    private var proven: [PeerAddress] = []
    private var finished = false
    /// Where media went before an ICE restart: kept until a check under the new credentials nominates.
    private var previousDestination: PeerAddress?
    private static let provenLimit = 4

    init(parameters: WebRTCParameters, context: DTLSContext, nowMs: Int64) throws(DTLSError) {
        self.parameters = parameters
        agent = ICELiteAgent(
            localUfrag: parameters.localUfrag, localPassword: parameters.localPassword,
            remoteUfrag: parameters.remoteUfrag, remotePassword: parameters.remotePassword, nowMs: nowMs)
        dtls = try DTLSEndpoint(
            context: context, role: parameters.dtlsServer ? .server : .client,
            peerFingerprint: (parameters.fingerprint.algorithm, parameters.fingerprint.digest))
    }

    /// Where media and RTCP go: the nominated address.
    var destination: PeerAddress? { lock.withLock { agent.nominated ?? previousDestination } }

    /// An ICE restart (RFC 8445 §9, by WHIP PATCH): the peer's new credentials, fresh ones of ours; DTLS and SRTP go
    /// on. Media keeps going to the old address until a check under the new credentials nominates one.
    func restartICE(remoteUfrag: String, remotePassword: String?, nowMs: Int64) -> (ufrag: String, password: String) {
        lock.lock()
        defer { lock.unlock() }
        previousDestination = agent.nominated ?? previousDestination
        agent = ICELiteAgent(
            localUfrag: JoinNegotiator.randomICEString(8), localPassword: JoinNegotiator.randomICEString(24),
            remoteUfrag: remoteUfrag, remotePassword: remotePassword, nowMs: nowMs)
        return (agent.localUfrag, agent.localPassword)
    }

    /// The peer's current ICE ufrag (the offer's, or the last restart's).
    var remoteUfrag: String { lock.withLock { agent.remoteUfrag } }

    func accepts(_ peer: PeerAddress) -> Bool { lock.withLock { proven.contains(peer) } }

    var isConnected: Bool { keys.current != nil }

    /// A STUN datagram for this transport: the answer to send back, whether `peer` is newly proven, the proven
    /// address that made room for it (no longer accepted), and a DTLS client's first flight once a check proved an
    /// address.
    func handleSTUN(
        _ bytes: [UInt8], from peer: PeerAddress, nowMs: Int64
    ) -> (
        response: [UInt8]?, newlyProven: Bool, dropped: PeerAddress?, flight: [[UInt8]]
    ) {
        lock.lock()
        defer { lock.unlock() }
        let outcome = agent.handle(bytes, from: peer, nowMs: nowMs) { transaction in
            if let v4 = peer.ipv4 { return XORMappedAddress.value(ipv4: v4, port: peer.port) }
            var raw = peer.ipv6 ?? in6_addr()
            let bytes = withUnsafeBytes(of: &raw) { Array($0) }
            return XORMappedAddress.value(ipv6: bytes, port: peer.port, transactionID: transaction)
        }
        guard case .respond(let response) = outcome else { return (nil, false, nil, []) }
        var newlyProven = false
        var dropped: PeerAddress?
        if let index = proven.firstIndex(of: peer) {
            proven.remove(at: index)
        } else {
            newlyProven = true
            if proven.count == Self.provenLimit { dropped = proven.removeFirst() }
        }
        proven.append(peer)
        var flight: [[UInt8]] = []
        if dtls.role == .client && newlyProven && proven.count == 1 {
            dtls.cookieSubject = Array(peer.description.utf8)
            flight = dtls.start()
        }
        return (response, newlyProven, dropped, flight)
    }

    /// A STUN success response from `peer`: whether it answered one of Cohost's consent checks (consent renewed).
    func handleConsentAnswer(_ bytes: [UInt8], from peer: PeerAddress, nowMs: Int64) -> Bool {
        lock.withLock {
            agent.handle(bytes, from: peer, nowMs: nowMs) { _ in [] } == .consented
        }
    }

    /// The consent check due now, and where it goes.
    func consentCheck(nowMs: Int64) -> (bytes: [UInt8], to: PeerAddress)? {
        lock.withLock { finished ? nil : agent.consentCheck(nowMs: nowMs) }
    }

    /// A DTLS datagram from a proven address: what to send back, and what changed.
    func handleDTLS(_ bytes: [UInt8], from peer: PeerAddress) -> (flight: [[UInt8]], event: Event?) {
        lock.lock()
        defer { lock.unlock() }
        let before = dtls.state
        if dtls.role == .server && before == .handshaking { dtls.cookieSubject = Array(peer.description.utf8) }
        let flight = dtls.receive(bytes)
        return (flight, transition(from: before))
    }

    /// Retransmits a handshake flight whose timer ran out; says when consent expired.
    func tick(nowMs: Int64) -> (flight: [[UInt8]], event: Event?) {
        lock.lock()
        defer { lock.unlock() }
        guard !finished else { return ([], nil) }
        if agent.consentExpired(nowMs: nowMs) {
            finished = true
            return ([], .consentExpired)
        }
        guard let remaining = dtls.timeoutRemainingMs, remaining == 0 else { return ([], nil) }
        let before = dtls.state
        let flight = dtls.handleTimeout()
        return (flight, transition(from: before))
    }

    /// close_notify for a participant Cohost removes (kick, leave by API, room closed).
    func close() -> [[UInt8]] {
        lock.lock()
        defer { lock.unlock() }
        finished = true
        return dtls.close()
    }

    /// Datagrams OpenSSL refused, and checks the agent refused.
    var refusals: (dtls: Int, stun: Int) { lock.withLock { (dtls.discarded, agent.refused) } }

    private func transition(from before: DTLSEndpoint.State) -> Event? {
        let after = dtls.state
        guard after != before, !finished else { return nil }
        switch after {
        case .connected:
            if let keys = dtls.keys { self.keys.publish(keys) }
            return .connected
        case .closed:
            finished = true
            return .closed
        case .failed(let reason):
            finished = true
            return .failed(reason)
        case .handshaking:
            return nil
        }
    }
}
