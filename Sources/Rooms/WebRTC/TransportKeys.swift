import DTLS
import SRTP
import Synchronization

/// The SRTP keys of a WebRTC participant, published once its DTLS handshake is done. Every stream of the participant
/// (what it sends, what Cohost sends back, the RTCP both ways) reads them here and keys its own libsrtp session
/// from them: one session per stream and thread, as libsrtp wants, all from the one handshake.
final class TransportKeys: Sendable {
    private let keys = Mutex<DTLSSRTPKeys?>(nil)

    var current: DTLSSRTPKeys? { keys.withLock { $0 } }

    func publish(_ value: DTLSSRTPKeys) { keys.withLock { $0 = value } }

    /// A session for what the participant sends (`.inbound`) or what Cohost sends it (`.outbound`); nil before the
    /// handshake finished, or when libsrtp refuses the keys.
    func session(_ direction: SRTPSession.Direction) -> SRTPSession? {
        guard let keys = current else { return nil }
        return try? SRTPSession(
            profile: keys.profile, masterKeyAndSalt: direction == .inbound ? keys.remote : keys.local,
            direction: direction)
    }
}
