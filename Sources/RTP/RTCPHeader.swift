/// The header every RTCP packet starts with (RFC 3550 §6.4.1; RFC 4585 §6.1 reuses the count as FMT).
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |V=2|P| RC/SC/FMT |      PT       |             length            |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
/// `length` is the packet size in 32-bit words minus one, header included.
public struct RTCPHeader: Equatable, Sendable {
    public var padding: Bool
    /// Report count, source count or feedback message type (5 bits).
    public var count: UInt8
    public var packetType: UInt8
    public var length: UInt16

    public init(padding: Bool = false, count: UInt8, packetType: UInt8, length: UInt16) {
        self.padding = padding
        self.count = count
        self.packetType = packetType
        self.length = length
    }

    /// Packet types Cohost understands (RFC 3550 §12.1, RFC 4585 §6.1).
    public static let senderReportType: UInt8 = 200
    public static let receiverReportType: UInt8 = 201
    public static let sourceDescriptionType: UInt8 = 202
    public static let goodbyeType: UInt8 = 203
    public static let transportFeedbackType: UInt8 = 205
    public static let payloadFeedbackType: UInt8 = 206

    /// The packet's total size in bytes, header included.
    public var packetSize: Int { (Int(length) + 1) * 4 }

    public func serialized() -> [UInt8] {
        var out: [UInt8] = []
        append(to: &out)
        return out
    }

    func append(to out: inout [UInt8]) {
        out.append(0x80 | (padding ? 0x20 : 0) | (count & 0x1F))
        out.append(packetType)
        out.appendBigEndian(length)
    }

    /// Validates the packet starting at `offset`: version, length within `bytes`, padding.
    /// Returns the header, the body range (after the header, padding removed) and where the packet ends.
    static func parse(
        _ bytes: [UInt8], at offset: Int
    ) throws(RTCPError)
        -> (header: RTCPHeader, body: Range<Int>, end: Int)
    {
        guard bytes.count - offset >= 4 else { throw .tooShort }
        let version = bytes[offset] >> 6
        guard version == 2 else { throw .badVersion(version) }
        let header = RTCPHeader(
            padding: bytes[offset] & 0x20 != 0, count: bytes[offset] & 0x1F,
            packetType: bytes[offset + 1], length: readUInt16(bytes, offset + 2))
        let end = offset + header.packetSize
        guard end <= bytes.count else { throw .lengthOverrun(packetType: header.packetType) }
        var bodyEnd = end
        if header.padding {
            let pad = Int(bytes[end - 1])
            // Every RTCP body is a whole number of words (RFC 3550 §6.4–6.6, RFC 4585 §6.1), so padding
            // is too; an odd count would leave a body no serialiser can reproduce (found by fuzz/rtcp).
            guard pad > 0, pad % 4 == 0, pad <= header.packetSize - 4 else {
                throw .badPadding(packetType: header.packetType)
            }
            bodyEnd -= pad
        }
        return (header, offset + 4..<bodyEnd, end)
    }

    /// Checks the common part of a feedback message (RFC 4585 §6.1): the packet type, the message
    /// type carried in the count field (FMT), and room for the sender and media SSRCs in `body`.
    func checkFeedback(packetType expected: UInt8, format: UInt8, body: Range<Int>) throws(RTCPError) {
        guard packetType == expected else { throw .wrongPacketType(expected: expected, got: packetType) }
        guard count == format else { throw .wrongFeedbackType(expected: format, got: count) }
        guard body.count >= 8 else { throw .truncatedBody(packetType: expected) }
    }

    /// The length field for a packet whose body is `bodyBytes` long (a multiple of 4).
    static func lengthField(bodyBytes: Int) -> UInt16 {
        UInt16(clamping: bodyBytes / 4)
    }
}
