/// Receiver Estimated Maximum Bitrate (draft-alvestrand-rmcat-remb-03 §2.2): application-layer
/// feedback (PSFB PT=206, FMT=15) carrying the total bitrate the receiver estimates it can take
/// for the listed SSRCs.
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |V=2|P| FMT=15  |   PT=206      |             length            |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                  SSRC of packet sender                        |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                  SSRC of media source (0)                     |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |  Unique identifier 'R' 'E' 'M' 'B'                            |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |  Num SSRC     | BR Exp    |  BR Mantissa                      |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |   SSRC feedback                                               |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |  ...                                                          |
/// ```
/// The bitrate is `mantissa << exp` bits per second (6-bit exponent, 18-bit mantissa).
public struct ReceiverEstimatedMaximumBitrate: Equatable, Sendable, RTCPWireFormat {
    public static let formatType: UInt8 = 15
    /// "REMB" in ASCII.
    public static let identifier: [UInt8] = [0x52, 0x45, 0x4D, 0x42]
    /// The largest bitrate that fits both the wire format and a UInt64: an 18-bit mantissa of all
    /// ones shifted by 46. Larger wire values (exponents up to 63) saturate to it.
    public static let maxBitrate: UInt64 = 0x3FFFF << 46

    public var senderSSRC: UInt32
    public var mediaSSRC: UInt32
    /// Bits per second. Serialising rounds down to 18 significant bits (an estimate is a ceiling,
    /// so never send more than was measured).
    public var bitrate: UInt64
    /// At most 255 (the Num SSRC field is 8 bits); extra SSRCs are dropped when serialising.
    public var ssrcs: [UInt32]

    public init(senderSSRC: UInt32, mediaSSRC: UInt32 = 0, bitrate: UInt64, ssrcs: [UInt32]) {
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
        self.bitrate = bitrate
        self.ssrcs = ssrcs
    }

    /// Whether a PSFB FMT=15 body carries the REMB identifier (other application feedback may use FMT=15).
    static func hasIdentifier(_ b: [UInt8], _ body: Range<Int>) -> Bool {
        body.count >= 12 && b[body.lowerBound + 8..<body.lowerBound + 12].elementsEqual(identifier)
    }

    /// The exponent and mantissa for a bitrate: the smallest exponent whose mantissa fits 18 bits.
    public static func encode(_ bitrate: UInt64) -> (exponent: UInt8, mantissa: UInt32) {
        let exponent = max(0, (64 - bitrate.leadingZeroBitCount) - 18)
        return (UInt8(exponent), UInt32(truncatingIfNeeded: bitrate >> exponent))
    }

    /// `mantissa << exponent`, saturating at `maxBitrate` when it would not fit 64 bits.
    public static func decode(exponent: UInt8, mantissa: UInt32) -> UInt64 {
        let m = UInt64(mantissa & 0x3FFFF), e = Int(exponent & 0x3F)
        guard m != 0 else { return 0 }
        guard m.leadingZeroBitCount >= e else { return maxBitrate }
        return m << e
    }

    /// Parses one REMB packet (bytes past its declared length are ignored).
    public init(bytes: [UInt8]) throws(RTCPError) {
        let (header, body, _) = try RTCPHeader.parse(bytes, at: 0)
        try self.init(header, bytes, body)
    }

    init(_ header: RTCPHeader, _ b: [UInt8], _ body: Range<Int>) throws(RTCPError) {
        let pt = RTCPHeader.payloadFeedbackType
        // The common feedback header, then the identifier: anything else is another application's
        // feedback (possibly shorter than a REMB), which a compound parser keeps rather than refuses.
        try header.checkFeedback(packetType: pt, format: Self.formatType, body: body)
        guard Self.hasIdentifier(b, body) else { throw .wrongApplicationIdentifier }
        guard body.count >= 16 else { throw .truncatedBody(packetType: pt) }
        let at = body.lowerBound + 12
        let count = Int(b[at])
        guard body.count - 16 >= 4 * count else { throw .truncatedBody(packetType: pt) }
        let field = readUInt24(b, at + 1)
        self.init(
            senderSSRC: readUInt32(b, body.lowerBound), mediaSSRC: readUInt32(b, body.lowerBound + 4),
            bitrate: Self.decode(exponent: UInt8(field >> 18), mantissa: field & 0x3FFFF),
            ssrcs: (0..<count).map { readUInt32(b, at + 4 + 4 * $0) })
    }

    public func append(to out: inout [UInt8]) {
        let list = ssrcs.prefix(255)
        let (exponent, mantissa) = Self.encode(bitrate)
        out.reserve(additional: 20 + 4 * list.count)
        RTCPHeader(
            count: Self.formatType, packetType: RTCPHeader.payloadFeedbackType,
            length: UInt16(4 + list.count)
        ).append(to: &out)
        out.appendBigEndian(senderSSRC)
        out.appendBigEndian(mediaSSRC)
        out.append(contentsOf: Self.identifier)
        out.append(UInt8(list.count))
        out.appendBigEndian24(UInt32(exponent) << 18 | mantissa)
        for ssrc in list { out.appendBigEndian(ssrc) }
    }
}
