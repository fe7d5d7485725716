/// The bitrate Cohost tells a WebRTC sender it may use (REMB, once a second): the room's `maxIngestBitrate`, lowered
/// while the sender's video loses packets and raised again when it stops. Chrome sends at most the smaller of this
/// and its own estimate, so a cap holds and a lossy path is relieved. Pure: the caller feeds one report a second.
struct SenderBitrateLimit: Sendable, Equatable {
    /// bits per second
    let cap: Int
    static let floor = 100_000
    private(set) var current: Int

    init(capKbps: Int) {
        cap = capKbps * 1000
        current = cap
    }

    /// `fractionLost` as a reception report carries it (/256); `receivedBps` what arrived over the last second.
    mutating func update(fractionLost: UInt8, receivedBps: Int) {
        let loss = Double(fractionLost) / 256
        if loss > 0.10 {
            // Like the loss-based half of GCC (draft-ietf-rmcat-gcc §6): back off from what actually arrives.
            let measured = receivedBps > 0 ? receivedBps : current
            current = max(Self.floor, Int(Double(min(measured, current)) * (1 - loss / 2)))
        } else if loss < 0.02 {
            current = min(cap, Int(Double(current) * 1.08) + 1_000)
        }
    }
}
