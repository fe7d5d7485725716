import DTLS
import Foundation
import ICE

/// The server's WebRTC participants on the shared media port: by ICE ufrag (a STUN check names ours in its
/// USERNAME) and by proven address (DTLS and SRTP carry no name, only their source). One lock; the transports have
/// their own. Counts what it drops.
public final class WebRTCTable: @unchecked Sendable {
    struct Entry {
        let transport: WebRTCTransport
        let participant: Participant
        let room: String
    }

    public struct Counters: Sendable, Equatable {
        /// WebRTC participants now.
        public var transports = 0
        /// STUN datagrams that named no transport of ours, or failed a transport's checks.
        public var stunIgnored = 0
        /// DTLS records from an address no check proved.
        public var dtlsUnknownSource = 0
        public var handshakesCompleted = 0
        public var handshakesFailed = 0
        /// Consent checks Cohost sent (RFC 7675), and valid answers to them.
        public var consentChecks = 0
        public var consentAnswers = 0
    }

    private let lock = NSLock()
    private var byUfrag: [String: Entry] = [:]
    private var byAddress: [PeerAddress: Entry] = [:]
    private var counters = Counters()

    var snapshot: Counters {
        lock.withLock {
            var c = counters
            c.transports = byUfrag.count
            return c
        }
    }
    var count: Int { lock.withLock { byUfrag.count } }
    var entries: [Entry] { lock.withLock { Array(byUfrag.values) } }

    func add(_ transport: WebRTCTransport, participant: Participant, room: String) {
        lock.withLock {
            byUfrag[transport.localUfrag] = Entry(transport: transport, participant: participant, room: room)
        }
    }

    /// Forgets a participant's transport and its addresses; returns the transport.
    @discardableResult
    func remove(_ participant: Participant) -> WebRTCTransport? {
        guard let transport = participant.webRTC else { return nil }
        lock.lock()
        defer { lock.unlock() }
        guard byUfrag[transport.localUfrag]?.participant === participant else { return nil }
        byUfrag[transport.localUfrag] = nil
        byAddress = byAddress.filter { $0.value.transport !== transport }
        return transport
    }

    /// Gives a participant's transport new ICE credentials (an ICE restart) and files it under its new ufrag.
    func restartICE(
        _ participant: Participant, remoteUfrag: String, remotePassword: String?, nowMs: Int64
    ) -> (ufrag: String, password: String)? {
        guard let transport = participant.webRTC else { return nil }
        lock.lock()
        defer { lock.unlock() }
        let old = transport.localUfrag
        guard let entry = byUfrag[old], entry.participant === participant else { return nil }
        let fresh = transport.restartICE(remoteUfrag: remoteUfrag, remotePassword: remotePassword, nowMs: nowMs)
        byUfrag[old] = nil
        byUfrag[fresh.ufrag] = entry
        return fresh
    }

    /// The transport a proven address belongs to.
    func entry(for peer: PeerAddress) -> Entry? { lock.withLock { byAddress[peer] } }

    /// A STUN datagram: finds the transport its USERNAME names, lets it check and answer. Returns the entry, the
    /// answer and any DTLS flight to send to `peer`; nil when the datagram is ignored (counted).
    func handleSTUN(
        _ bytes: [UInt8], from peer: PeerAddress, nowMs: Int64
    ) -> (
        entry: Entry, response: [UInt8], flight: [[UInt8]]
    )? {
        guard let message = try? STUNMessage(bytes: bytes) else {
            lock.withLock { counters.stunIgnored += 1 }
            return nil
        }
        // An answer to a consent check carries no USERNAME: it comes from the address the check went to.
        if message.messageClass == .success {
            guard let entry = lock.withLock({ byAddress[peer] }),
                entry.transport.handleConsentAnswer(bytes, from: peer, nowMs: nowMs)
            else {
                lock.withLock { counters.stunIgnored += 1 }
                return nil
            }
            lock.withLock { counters.consentAnswers += 1 }
            return (entry, [], [])
        }
        guard let username = message.username,
            let ufrag = username.split(separator: ":", maxSplits: 1).first,
            let entry = lock.withLock({ byUfrag[String(ufrag)] })
        else {
            lock.withLock { counters.stunIgnored += 1 }
            return nil
        }
        let (response, newlyProven, dropped, flight) = entry.transport.handleSTUN(bytes, from: peer, nowMs: nowMs)
        guard let response else {
            lock.withLock { counters.stunIgnored += 1 }
            return nil
        }
        if newlyProven {
            lock.withLock {
                // Still ours (not removed meanwhile): the address now speaks for this transport.
                if byUfrag[entry.transport.localUfrag]?.transport === entry.transport { byAddress[peer] = entry }
                // The transport keeps a few addresses: so does the table, however many a peer checks from.
                if let dropped, byAddress[dropped]?.transport === entry.transport { byAddress[dropped] = nil }
            }
        }
        return (entry, response, flight)
    }

    func countDTLSUnknownSource() { lock.withLock { counters.dtlsUnknownSource += 1 } }

    func countConsentCheck() { lock.withLock { counters.consentChecks += 1 } }

    func countHandshake(succeeded: Bool) {
        lock.withLock {
            if succeeded { counters.handshakesCompleted += 1 } else { counters.handshakesFailed += 1 }
        }
    }
}
