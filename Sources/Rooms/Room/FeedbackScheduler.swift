import RTP

/// The RTCP a room sends its senders: on every audio tick each participant's keyframe requests and NACKs when
/// due, and receiver reports once a second (a second whose tick the clock skipped still gets its reports).
/// Confined to the room's queue; the datagram and its SRTCP form are reused tick after tick.
final class FeedbackScheduler {
    /// Sends one compound RTCP datagram, with a buffer for its SRTCP form. Both are the room's, reused: keeping
    /// them past the call is safe but makes the next tick reallocate.
    typealias Sender = @Sendable (Participant, [UInt8], inout [UInt8]) -> Void

    private let serverSSRC: UInt32
    private let send: Sender
    private var bytes: [UInt8] = []
    private var protected: [UInt8] = []
    private var blocks: [ReceptionReport] = []
    private var lastTick: Int64?

    init(serverSSRC: UInt32, send: @escaping Sender) {
        self.serverSSRC = serverSSRC
        self.send = send
    }

    /// The feedback of audio tick `index` to each of `participants`.
    func tick(_ index: Int64, participants: [Participant], nowMs: Int64) {
        let reportDue = lastTick.map { $0 / 50 != index / 50 } ?? (index % 50 == 0)
        lastTick = index
        for p in participants {
            bytes.removeAll(keepingCapacity: true)
            p.feedback(nowMs: nowMs, serverSSRC: serverSSRC, reportDue: reportDue, blocks: &blocks, into: &bytes)
            if !bytes.isEmpty { send(p, bytes, &protected) }
        }
    }

    /// The room parked: the ticks after it wakes are no skipped ones.
    func forgetLastTick() { lastTick = nil }
}
