/// One reception report block inside an SR or RR (RFC 3550 §6.4.1).
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
/// |                 SSRC_1 (SSRC of first source)                 |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// | fraction lost |       cumulative number of packets lost       |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |           extended highest sequence number received           |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                      interarrival jitter                      |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                         last SR (LSR)                         |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                   delay since last SR (DLSR)                  |
/// +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
/// ```
public struct ReceptionReport: Equatable, Sendable {
    public static let size = 24

    public var ssrc: UInt32
    /// Fraction lost since the last report, in 1/256 units.
    public var fractionLost: UInt8
    /// Cumulative lost packets: a signed 24-bit field (duplicates can make it negative);
    /// clamped to -8388608...8388607 when serialising.
    public var totalLost: Int32
    public var extendedHighestSequence: UInt32
    /// Interarrival jitter in RTP timestamp units.
    public var jitter: UInt32
    /// Middle 32 bits of the NTP timestamp of the last SR received from this source.
    public var lastSenderReport: UInt32
    /// Delay since that SR, in 1/65536 s.
    public var delaySinceLastSenderReport: UInt32

    public init(
        ssrc: UInt32, fractionLost: UInt8 = 0, totalLost: Int32 = 0, extendedHighestSequence: UInt32 = 0,
        jitter: UInt32 = 0, lastSenderReport: UInt32 = 0, delaySinceLastSenderReport: UInt32 = 0
    ) {
        self.ssrc = ssrc
        self.fractionLost = fractionLost
        self.totalLost = totalLost
        self.extendedHighestSequence = extendedHighestSequence
        self.jitter = jitter
        self.lastSenderReport = lastSenderReport
        self.delaySinceLastSenderReport = delaySinceLastSenderReport
    }

    /// Reads a block at `offset`; the caller has checked that 24 bytes are there.
    init(_ b: [UInt8], at offset: Int) {
        let raw = readUInt24(b, offset + 5)
        // Sign-extend the 24-bit two's complement value.
        let lost = raw & 0x80_0000 != 0 ? Int32(bitPattern: raw | 0xFF00_0000) : Int32(raw)
        self.init(
            ssrc: readUInt32(b, offset), fractionLost: b[offset + 4], totalLost: lost,
            extendedHighestSequence: readUInt32(b, offset + 8), jitter: readUInt32(b, offset + 12),
            lastSenderReport: readUInt32(b, offset + 16),
            delaySinceLastSenderReport: readUInt32(b, offset + 20))
    }

    func append(to out: inout [UInt8]) {
        out.appendBigEndian(ssrc)
        out.append(fractionLost)
        let lost = min(max(totalLost, -0x80_0000), 0x7F_FFFF)
        out.appendBigEndian24(UInt32(bitPattern: lost) & 0xFF_FFFF)
        out.appendBigEndian(extendedHighestSequence)
        out.appendBigEndian(jitter)
        out.appendBigEndian(lastSenderReport)
        out.appendBigEndian(delaySinceLastSenderReport)
    }

    /// Reads `count` blocks starting at `offset`, or throws if they do not fit before `end`.
    static func parseBlocks(
        _ b: [UInt8], at offset: Int, count: Int, end: Int,
        packetType: UInt8
    ) throws(RTCPError) -> [ReceptionReport] {
        guard end - offset >= count * size else { throw .truncatedBody(packetType: packetType) }
        return (0..<count).map { ReceptionReport(b, at: offset + $0 * size) }
    }
}

extension Array where Element == UInt8 {
    /// Appends `bytes` and zero-fills to the next 32-bit boundary (RTCP bodies are whole words).
    mutating func appendWordAligned(_ bytes: [UInt8]) {
        append(contentsOf: bytes)
        append(contentsOf: repeatElement(0, count: (4 - bytes.count % 4) % 4))
    }
}
