/// The ICE-lite side of one WebRTC participant (RFC 8445 §2.5, §7.3): it answers the browser's checks. A Binding
/// request is accepted only when its USERNAME is `<our ufrag>:<their ufrag>`, its MESSAGE-INTEGRITY verifies with
/// our password and its FINGERPRINT is right; the answer carries the address the request came from. A request with
/// USE-CANDIDATE nominates that address: media goes there from then on, so a phone that moves to another network and
/// checks again from there keeps its session.
///
/// Consent (RFC 7675) is Cohost's own: once an address is nominated, a Binding request goes there every 4 to 6 s,
/// signed with the peer's password, and only a valid answer from that address renews consent. A check from an
/// address (even a valid one, which a participant could send with a forged source) never does: with no answer for
/// `consentTimeoutMs` (30 s) the participant is gone, so media cannot be aimed at an address that does not want it.
/// Without the peer's password (an ICE restart that did not give one), valid checks renew it as before.
///
/// Pure: the caller passes the bytes, the source and the time, and sends what comes back. `Address` is whatever the
/// caller uses for a transport address.
public struct ICELiteAgent<Address: Hashable & Sendable>: Sendable {
    public static var consentTimeoutMs: Int64 { 30_000 }
    /// RFC 7675 §5.1: every 5 s, each interval drawn from 0.8 to 1.2 times that.
    public static var consentIntervalMs: ClosedRange<Int64> { 4_000...6_000 }

    public let localUfrag: String
    public let localPassword: String
    public let remoteUfrag: String
    /// The peer's password: what Cohost's consent checks are signed with; nil: none are sent.
    public let remotePassword: String?
    /// The address the last nominating check came from: where media goes.
    public private(set) var nominated: Address?
    /// When the last valid check came (monotonic ms).
    public private(set) var lastValidCheckMs: Int64
    /// Requests refused: bad USERNAME, integrity or fingerprint.
    public private(set) var refused = 0
    /// When an answer to a consent check of Cohost's last came (monotonic ms).
    public private(set) var lastConsentMs: Int64
    /// Consent checks sent, and answers that renewed consent.
    public private(set) var consentChecksSent = 0
    public private(set) var consentAnswers = 0
    private var nextConsentCheckMs: Int64
    /// The transaction IDs of the checks in flight (the last few), and where each went.
    private var pending: [(id: [UInt8], to: Address)] = []

    public enum Outcome: Equatable, Sendable {
        /// Send these bytes back to the request's source.
        case respond([UInt8])
        /// Not a valid check for this agent: nothing is sent (RFC 8445 §7.3: silently discarded).
        case ignore
        /// A valid answer to one of Cohost's consent checks: consent renewed, nothing to send.
        case consented
    }

    public init(
        localUfrag: String, localPassword: String, remoteUfrag: String, remotePassword: String? = nil, nowMs: Int64
    ) {
        self.localUfrag = localUfrag
        self.localPassword = localPassword
        self.remoteUfrag = remoteUfrag
        self.remotePassword = remotePassword
        lastValidCheckMs = nowMs
        lastConsentMs = nowMs
        nextConsentCheckMs = nowMs
    }

    /// The USERNAME a check for this agent carries.
    public var expectedUsername: String { "\(localUfrag):\(remoteUfrag)" }

    /// Handles one STUN datagram from `source`; `mapped` encodes `source` as an XOR-MAPPED-ADDRESS value for the
    /// request's transaction ID.
    public mutating func handle(
        _ bytes: [UInt8], from source: Address, nowMs: Int64, mapped: (_ transactionID: [UInt8]) -> [UInt8]
    ) -> Outcome {
        guard let message = try? STUNMessage(bytes: bytes), message.method == STUNMessage.bindingMethod else {
            refused += 1
            return .ignore
        }
        // Indications (a browser's keep-alives) carry no integrity and need no answer.
        if message.messageClass == .indication { return .ignore }
        if message.messageClass == .success { return answer(message, bytes, from: source, nowMs: nowMs) }
        guard message.messageClass == .request, message.username == expectedUsername,
            message.hasValidFingerprint(in: bytes),
            message.hasValidIntegrity(in: bytes, key: Array(localPassword.utf8))
        else {
            refused += 1
            return .ignore
        }
        lastValidCheckMs = nowMs
        if message.attribute(STUNMessage.AttributeType.useCandidate) != nil || nominated == nil {
            nominated = source
        }
        let response = STUNMessage(
            method: STUNMessage.bindingMethod, messageClass: .success, transactionID: message.transactionID,
            attributes: [.init(type: STUNMessage.AttributeType.xorMappedAddress, value: mapped(message.transactionID))])
        return .respond(response.serialized(integrityKey: Array(localPassword.utf8), fingerprint: true))
    }

    /// Whether consent expired: no answer to Cohost's checks (without the peer's password: no valid check) for
    /// `consentTimeoutMs`.
    public func consentExpired(nowMs: Int64) -> Bool {
        nowMs - (remotePassword == nil ? lastValidCheckMs : lastConsentMs) > Self.consentTimeoutMs
    }

    /// The consent check to send to the nominated address now, when one is due: USERNAME `<their ufrag>:<our ufrag>`,
    /// PRIORITY, ICE-CONTROLLED (a lite agent is controlled), MESSAGE-INTEGRITY with their password, FINGERPRINT.
    /// `random` gives the transaction ID, the tie-breaker and the next interval.
    public mutating func consentCheck(
        nowMs: Int64, random: (ClosedRange<Int64>) -> Int64 = { Int64.random(in: $0) }
    ) -> (bytes: [UInt8], to: Address)? {
        guard let remotePassword, let to = nominated, nowMs >= nextConsentCheckMs else { return nil }
        nextConsentCheckMs = nowMs + random(Self.consentIntervalMs)
        let id = (0..<12).map { _ in UInt8(truncatingIfNeeded: random(0...255)) }
        let tieBreaker = (0..<8).map { _ in UInt8(truncatingIfNeeded: random(0...255)) }
        // A peer-reflexive candidate's priority (RFC 8445 §5.1.2): type preference 110, component 1.
        let priority = UInt32(110) << 24 | UInt32(65_535) << 8 | UInt32(255)
        let request = STUNMessage(
            method: STUNMessage.bindingMethod, messageClass: .request, transactionID: id,
            attributes: [
                .init(type: STUNMessage.AttributeType.username, value: Array("\(remoteUfrag):\(localUfrag)".utf8)),
                .init(
                    type: STUNMessage.AttributeType.priority,
                    value: [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: priority >> $0) }),
                .init(type: STUNMessage.AttributeType.iceControlled, value: tieBreaker),
            ])
        pending.append((id, to))
        if pending.count > 4 { pending.removeFirst() }
        consentChecksSent += 1
        return (request.serialized(integrityKey: Array(remotePassword.utf8), fingerprint: true), to)
    }

    /// A success response: consent when it answers a check in flight, from where that check went, and verifies
    /// with the peer's password.
    private mutating func answer(
        _ message: STUNMessage, _ bytes: [UInt8], from source: Address, nowMs: Int64
    )
        -> Outcome
    {
        guard let remotePassword,
            let index = pending.firstIndex(where: { $0.id == message.transactionID && $0.to == source }),
            message.hasValidFingerprint(in: bytes),
            message.hasValidIntegrity(in: bytes, key: Array(remotePassword.utf8))
        else {
            refused += 1
            return .ignore
        }
        pending.remove(at: index)
        lastConsentMs = nowMs
        consentAnswers += 1
        return .consented
    }
}
