/// The ICE-lite side of one WebRTC participant (RFC 8445 §2.5, §7.3): Cohost never sends checks, it answers the
/// browser's. A Binding request is accepted only when its USERNAME is `<our ufrag>:<their ufrag>`, its
/// MESSAGE-INTEGRITY verifies with our password and its FINGERPRINT is right; the answer carries the address the
/// request came from. A request with USE-CANDIDATE nominates that address: media goes there from then on, so a
/// phone that moves to another network and checks again from there keeps its session. With no valid check for
/// `consentTimeoutMs` (RFC 7675: 30 s) the participant is gone.
///
/// Pure: the caller passes the bytes, the source and the time, and sends what comes back. `Address` is whatever the
/// caller uses for a transport address.
public struct ICELiteAgent<Address: Hashable & Sendable>: Sendable {
    public static var consentTimeoutMs: Int64 { 30_000 }

    public let localUfrag: String
    public let localPassword: String
    public let remoteUfrag: String
    /// The address the last nominating check came from: where media goes.
    public private(set) var nominated: Address?
    /// When the last valid check came (monotonic ms).
    public private(set) var lastValidCheckMs: Int64
    /// Requests refused: bad USERNAME, integrity or fingerprint.
    public private(set) var refused = 0

    public enum Outcome: Equatable, Sendable {
        /// Send these bytes back to the request's source.
        case respond([UInt8])
        /// Not a valid check for this agent: nothing is sent (RFC 8445 §7.3: silently discarded).
        case ignore
    }

    public init(localUfrag: String, localPassword: String, remoteUfrag: String, nowMs: Int64) {
        self.localUfrag = localUfrag
        self.localPassword = localPassword
        self.remoteUfrag = remoteUfrag
        lastValidCheckMs = nowMs
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

    /// Whether consent expired: no valid check for `consentTimeoutMs`.
    public func consentExpired(nowMs: Int64) -> Bool { nowMs - lastValidCheckMs > Self.consentTimeoutMs }
}
