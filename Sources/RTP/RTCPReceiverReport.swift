/// RTCP Receiver Report (RFC 3550 §6.4.2): reception statistics from a participant that does not send.
///
/// ```
///         0                   1                   2                   3
///         0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
///        +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// header |V=2|P|    RC   |   PT=RR=201   |             length            |
///        +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///        |                     SSRC of packet sender                     |
///        +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
/// report |                 report blocks (24 bytes each)                 |
///        +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
///        |                  profile-specific extensions                  |
///        +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
public struct ReceiverReport: Equatable, Sendable, RTCPWireFormat {
    public var ssrc: UInt32
    /// At most 31 (the RC field is 5 bits); extra blocks are dropped when serialising.
    public var reports: [ReceptionReport]
    /// Whatever follows the report blocks; zero-filled to a word boundary when serialising.
    public var profileExtensions: [UInt8]

    public init(ssrc: UInt32, reports: [ReceptionReport] = [], profileExtensions: [UInt8] = []) {
        self.ssrc = ssrc
        self.reports = reports
        self.profileExtensions = profileExtensions
    }

    /// Parses one RR packet (bytes past its declared length are ignored).
    public init(bytes: [UInt8]) throws(RTCPError) {
        let (header, body, _) = try RTCPHeader.parse(bytes, at: 0)
        try self.init(header, bytes, body)
    }

    init(_ header: RTCPHeader, _ b: [UInt8], _ body: Range<Int>) throws(RTCPError) {
        let pt = RTCPHeader.receiverReportType
        guard header.packetType == pt else { throw .wrongPacketType(expected: pt, got: header.packetType) }
        guard body.count >= 4 else { throw .truncatedBody(packetType: pt) }
        let reports = try ReceptionReport.parseBlocks(
            b, at: body.lowerBound + 4, count: Int(header.count),
            end: body.upperBound, packetType: pt)
        let extStart = body.lowerBound + 4 + reports.count * ReceptionReport.size
        self.init(
            ssrc: readUInt32(b, body.lowerBound), reports: reports,
            profileExtensions: Array(b[extStart..<body.upperBound]))
    }

    public func append(to out: inout [UInt8]) {
        let blocks = reports.prefix(31)
        let bodyBytes = 4 + blocks.count * ReceptionReport.size + (profileExtensions.count + 3) / 4 * 4
        out.reserve(additional: 4 + bodyBytes)
        RTCPHeader(
            count: UInt8(blocks.count), packetType: RTCPHeader.receiverReportType,
            length: RTCPHeader.lengthField(bodyBytes: bodyBytes)
        ).append(to: &out)
        out.appendBigEndian(ssrc)
        for block in blocks { block.append(to: &out) }
        out.appendWordAligned(profileExtensions)
    }
}
