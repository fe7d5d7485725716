/// Decides when a keyframe request (PLI or FIR) may go out for one stream: at most one per
/// `minIntervalMs`, because a keyframe takes a round trip and an encoder's time to arrive and
/// asking again meanwhile only makes the sender produce more large frames.
public struct KeyframeRequester: Sendable, Equatable {
    /// Why a keyframe is wanted.
    public enum Reason: String, Sendable, CaseIterable {
        /// The stream just started: nothing is decodable before a keyframe.
        case join
        /// The decoder rejected a frame; its references are broken.
        case decodeError
        /// Packets were lost and not recovered (NACK gave up): the next frames depend on missing data.
        case unrecoverableLoss
        /// The decoder skipped frames to stay within its budget, or to catch up with the sender, and may go on.
        case decodeResumed
    }

    public let minIntervalMs: Int64
    /// Requests let through (each should become one PLI/FIR).
    public private(set) var sent = 0
    /// Requests refused because one went out less than `minIntervalMs` before.
    public private(set) var suppressed = 0
    /// When and why the last request went out.
    public private(set) var lastSentMs: Int64?
    public private(set) var lastReason: Reason?

    public init(minIntervalMs: Int64 = 500) {
        self.minIntervalMs = max(0, minIntervalMs)
    }

    /// True when a PLI/FIR should be sent now; false when it is suppressed (counted).
    public mutating func request(reason: Reason, nowMs: Int64) -> Bool {
        if let last = lastSentMs, nowMs - last < minIntervalMs {
            suppressed += 1
            return false
        }
        sent += 1
        lastSentMs = nowMs
        lastReason = reason
        return true
    }
}
