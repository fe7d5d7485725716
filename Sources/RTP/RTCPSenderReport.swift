/// RTCP Sender Report (RFC 3550 §6.4.1): maps the sender's RTP clock to NTP wall-clock time.
///
/// ```
///         0                   1                   2                   3
///         0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
///        +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// header |V=2|P|    RC   |   PT=SR=200   |             length            |
///        +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///        |                         SSRC of sender                        |
///        +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
/// sender |              NTP timestamp, most significant word             |
/// info   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///        |             NTP timestamp, least significant word             |
///        +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///        |                         RTP timestamp                         |
///        +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///        |                     sender's packet count                     |
///        +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///        |                      sender's octet count                     |
///        +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
/// report |                 report blocks (24 bytes each)                 |
///        +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
///        |                  profile-specific extensions                  |
///        +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
public struct SenderReport: Equatable, Sendable, RTCPWireFormat {
    public var ssrc: UInt32
    /// 64-bit NTP timestamp (seconds since 1900 in the high word, fraction in the low word).
    public var ntpTimestamp: UInt64
    public var rtpTimestamp: UInt32
    public var packetCount: UInt32
    public var octetCount: UInt32
    /// At most 31 (the RC field is 5 bits); extra blocks are dropped when serialising.
    public var reports: [ReceptionReport]
    /// Whatever follows the report blocks; zero-filled to a word boundary when serialising.
    public var profileExtensions: [UInt8]

    public init(
        ssrc: UInt32, ntpTimestamp: UInt64, rtpTimestamp: UInt32, packetCount: UInt32,
        octetCount: UInt32, reports: [ReceptionReport] = [], profileExtensions: [UInt8] = []
    ) {
        self.ssrc = ssrc
        self.ntpTimestamp = ntpTimestamp
        self.rtpTimestamp = rtpTimestamp
        self.packetCount = packetCount
        self.octetCount = octetCount
        self.reports = reports
        self.profileExtensions = profileExtensions
    }

    /// Parses one SR packet (bytes past its declared length are ignored).
    public init(bytes: [UInt8]) throws(RTCPError) {
        let (header, body, _) = try RTCPHeader.parse(bytes, at: 0)
        try self.init(header, bytes, body)
    }

    init(_ header: RTCPHeader, _ b: [UInt8], _ body: Range<Int>) throws(RTCPError) {
        let pt = RTCPHeader.senderReportType
        guard header.packetType == pt else { throw .wrongPacketType(expected: pt, got: header.packetType) }
        guard body.count >= 24 else { throw .truncatedBody(packetType: pt) }
        let s = body.lowerBound
        let reports = try ReceptionReport.parseBlocks(
            b, at: s + 24, count: Int(header.count),
            end: body.upperBound, packetType: pt)
        let extStart = s + 24 + reports.count * ReceptionReport.size
        self.init(
            ssrc: readUInt32(b, s),
            ntpTimestamp: UInt64(readUInt32(b, s + 4)) << 32 | UInt64(readUInt32(b, s + 8)),
            rtpTimestamp: readUInt32(b, s + 12), packetCount: readUInt32(b, s + 16),
            octetCount: readUInt32(b, s + 20), reports: reports,
            profileExtensions: Array(b[extStart..<body.upperBound]))
    }

    public func append(to out: inout [UInt8]) {
        let blocks = reports.prefix(31)
        let extLength = (profileExtensions.count + 3) / 4 * 4
        let bodyBytes = 24 + blocks.count * ReceptionReport.size + extLength
        out.reserve(additional: 4 + bodyBytes)
        RTCPHeader(
            count: UInt8(blocks.count), packetType: RTCPHeader.senderReportType,
            length: RTCPHeader.lengthField(bodyBytes: bodyBytes)
        ).append(to: &out)
        out.appendBigEndian(ssrc)
        out.appendBigEndian(ntpTimestamp)
        out.appendBigEndian(rtpTimestamp)
        out.appendBigEndian(packetCount)
        out.appendBigEndian(octetCount)
        for block in blocks { block.append(to: &out) }
        out.appendWordAligned(profileExtensions)
    }
}
