/// Full Intra Request (RFC 5104 §4.3.1): payload-specific feedback (PT=206) with FMT=4. Asks each
/// listed media sender for a decoder refresh point (a keyframe); older senders answer FIR, not PLI.
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |V=2|P|  FMT=4  |    PT=206     |          length               |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                  SSRC of packet sender                        |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |             SSRC of media source (unused, 0)                  |
/// +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
/// |                              SSRC                             |  FCI entry,
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+  one per
/// | Seq nr.       |    Reserved (0)                               |  requested
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+  source
/// ```
public struct FullIntraRequest: Equatable, Sendable, RTCPWireFormat {
    public static let formatType: UInt8 = 4

    /// One requested source and the request's command sequence number (the same number for
    /// repeats of one request, incremented for a new request; RFC 5104 §4.3.1.1).
    public struct Entry: Equatable, Sendable {
        public var ssrc: UInt32
        public var sequenceNumber: UInt8

        public init(ssrc: UInt32, sequenceNumber: UInt8) {
            self.ssrc = ssrc
            self.sequenceNumber = sequenceNumber
        }
    }

    public var senderSSRC: UInt32
    /// RFC 5104 says 0; kept as received so a packet serialises back to the same bytes.
    public var mediaSSRC: UInt32
    /// At most 32766 (the 16-bit length field); extra entries are dropped when serialising.
    public var entries: [Entry]

    public init(senderSSRC: UInt32, mediaSSRC: UInt32 = 0, entries: [Entry]) {
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
        self.entries = entries
    }

    /// Parses one FIR packet (bytes past its declared length are ignored).
    public init(bytes: [UInt8]) throws(RTCPError) {
        let (header, body, _) = try RTCPHeader.parse(bytes, at: 0)
        try self.init(header, bytes, body)
    }

    init(_ header: RTCPHeader, _ b: [UInt8], _ body: Range<Int>) throws(RTCPError) {
        let pt = RTCPHeader.payloadFeedbackType
        try header.checkFeedback(packetType: pt, format: Self.formatType, body: body)
        // Common feedback header, then whole 8-byte FCI entries.
        guard (body.count - 8) % 8 == 0 else { throw .truncatedBody(packetType: pt) }
        let entries = stride(from: body.lowerBound + 8, to: body.upperBound, by: 8).map {
            Entry(ssrc: readUInt32(b, $0), sequenceNumber: b[$0 + 4])
        }
        self.init(
            senderSSRC: readUInt32(b, body.lowerBound), mediaSSRC: readUInt32(b, body.lowerBound + 4),
            entries: entries)
    }

    public func append(to out: inout [UInt8]) {
        let list = entries.prefix(32766)
        out.reserve(additional: 12 + 8 * list.count)
        RTCPHeader(
            count: Self.formatType, packetType: RTCPHeader.payloadFeedbackType,
            length: UInt16(2 + 2 * list.count)
        ).append(to: &out)
        out.appendBigEndian(senderSSRC)
        out.appendBigEndian(mediaSSRC)
        for entry in list {
            out.appendBigEndian(entry.ssrc)
            out.append(entry.sequenceNumber)
            out.append(0)
            out.append(0)
            out.append(0)  // reserved
        }
    }
}
