/// Makes one receiver slot a single continuous RTP stream whatever it shows (mediasoup's `SimpleConsumer`,
/// LiveKit's munger): sequence numbers and timestamps of each source are shifted so that the source's first packet
/// follows the last one sent, and a source is shown only from a packet that starts a keyframe. Packets of a source
/// from before its first shown one, and of any other source, are dropped. Time is passed in. Pure: one per slot,
/// confined to its owner.
public struct SlotRewriter: Sendable {
    /// The source shown (the sender's SSRC), nil when the slot shows nobody.
    public private(set) var source: UInt32?
    /// Whether the current source's keyframe came and its packets are being forwarded.
    public private(set) var started = false
    /// Segments begun: sources shown, and restarts after a pause.
    public private(set) var segments = 0
    private var sequenceOffset: UInt16 = 0
    private var timestampOffset: UInt32 = 0
    /// The current segment's first packet: its number from the source and as sent.
    private var firstIn: UInt16 = 0
    private var firstOut: UInt16 = 0
    private var highestOut: UInt16?
    private var lastTimestampOut: UInt32?
    private var lastSentMs: Int64 = 0
    private let initialSequence: UInt16
    private let initialTimestamp: UInt32

    /// The numbers the stream starts from (random, RFC 3550 §5.1).
    public init(initialSequence: UInt16, initialTimestamp: UInt32) {
        self.initialSequence = initialSequence
        self.initialTimestamp = initialTimestamp
    }

    /// Shows `source` from its next keyframe on (nil: nothing). The same source again changes nothing.
    public mutating func show(_ source: UInt32?) {
        guard source != self.source else { return }
        self.source = source
        started = false
    }

    /// Waits for the current source's next keyframe before sending again (after a pause), continuing the numbers.
    public mutating func restart() { started = false }

    /// The numbers to send a packet of `source` with, or nil to drop it.
    public mutating func rewrite(
        source: UInt32, sequence: UInt16, timestamp: UInt32, startsKeyframe: Bool, nowMs: Int64
    ) -> (sequence: UInt16, timestamp: UInt32)? {
        guard source == self.source else { return nil }
        if !started {
            guard startsKeyframe else { return nil }
            begin(sequence: sequence, timestamp: timestamp, nowMs: nowMs)
        } else if Int16(bitPattern: sequence &- firstIn) < 0 {
            // From before the segment began: its number is the previous segment's.
            return nil
        }
        let out = sequence &+ sequenceOffset
        let stamp = timestamp &+ timestampOffset
        if highestOut.map({ Int16(bitPattern: out &- $0) > 0 }) ?? true {
            highestOut = out
            lastTimestampOut = stamp
        }
        lastSentMs = nowMs
        return (out, stamp)
    }

    /// The source's number of a packet sent as `sequence`, when it is of the current segment (a receiver's NACK).
    public func original(ofSequence sequence: UInt16) -> UInt16? {
        guard started, let highestOut, Int16(bitPattern: sequence &- firstOut) >= 0,
            Int16(bitPattern: highestOut &- sequence) >= 0
        else { return nil }
        return sequence &- sequenceOffset
    }

    /// The timestamp a packet of the current segment carries when sent (a retransmission's).
    public func rewritten(timestamp: UInt32) -> UInt32 { timestamp &+ timestampOffset }

    private mutating func begin(sequence: UInt16, timestamp: UInt32, nowMs: Int64) {
        let out = highestOut.map { $0 &+ 1 } ?? initialSequence
        sequenceOffset = out &- sequence
        // The new picture is due as long after the last one as the wall clock says (at least one tick).
        let stamp =
            lastTimestampOut.map { $0 &+ UInt32(clamping: max(1, (nowMs - lastSentMs) * 90)) } ?? initialTimestamp
        timestampOffset = stamp &- timestamp
        firstIn = sequence
        firstOut = out
        started = true
        segments += 1
    }
}
