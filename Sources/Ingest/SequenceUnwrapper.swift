/// Turns 16-bit RTP sequence numbers into a monotonic 64-bit count across wrap-arounds
/// (the cycles-plus-max_seq bookkeeping of RFC 3550 Appendix A.1).
///
/// Each number is placed within ±32768 of the highest seen so far, so 65535 → 0 continues at 65536,
/// and a reordered packet from before a wrap lands just below it.
public struct SequenceUnwrapper: Sendable {
    /// The highest extended sequence number returned so far; nil before the first packet.
    public private(set) var highest: Int64?

    public init() {}

    public mutating func unwrap(_ seq: UInt16) -> Int64 {
        let extended = peek(seq)
        if extended > highest ?? Int64.min { highest = extended }
        return extended
    }

    /// The extended number `seq` would get, without recording it.
    public func peek(_ seq: UInt16) -> Int64 {
        guard let highest else { return Int64(seq) }
        return highest + Int64(Int16(bitPattern: seq &- UInt16(truncatingIfNeeded: highest)))
    }

    public mutating func reset() { highest = nil }
}
