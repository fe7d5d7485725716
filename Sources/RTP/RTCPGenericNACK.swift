/// Generic NACK (RFC 4585 §6.2.1): transport-layer feedback (PT=205) with FMT=1 listing lost RTP
/// packets of one media source, so the sender can retransmit them.
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |V=2|P|  FMT=1  |    PT=205     |          length               |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                  SSRC of packet sender                        |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                  SSRC of media source                         |
/// +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
/// |            PID                |             BLP               |  FCI entry,
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+  one or more
/// ```
/// PID is a lost sequence number; bit i of BLP (least significant = 0) says PID + i + 1 is lost too.
public struct GenericNACK: Equatable, Sendable, RTCPWireFormat {
    public static let formatType: UInt8 = 1

    /// One FCI entry: a lost packet and a bitmask of lost packets among the 16 after it.
    public struct Entry: Equatable, Sendable {
        public var packetID: UInt16
        public var lostBitmask: UInt16

        public init(packetID: UInt16, lostBitmask: UInt16 = 0) {
            self.packetID = packetID
            self.lostBitmask = lostBitmask
        }
    }

    public var senderSSRC: UInt32
    public var mediaSSRC: UInt32
    /// At most 65533 (the 16-bit length field); extra entries are dropped when serialising.
    public var entries: [Entry]

    public init(senderSSRC: UInt32, mediaSSRC: UInt32, entries: [Entry]) {
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
        self.entries = entries
    }

    /// Packs lost sequence numbers (any order, duplicates allowed) into the fewest entries for their
    /// sequence order. That order starts after the widest gap between them on the 16-bit circle, so
    /// a list crossing 65535 → 0 packs as one run.
    public init(senderSSRC: UInt32, mediaSSRC: UInt32, lostSequenceNumbers: [UInt16]) {
        let unique = Array(Set(lostSequenceNumbers)).sorted()
        var start = 0, widest = -1
        for i in unique.indices {
            let gap = (Int(unique[(i + 1) % unique.count]) - Int(unique[i]) + 65536) % 65536
            if gap > widest {
                widest = gap
                start = (i + 1) % unique.count
            }
        }
        var entries: [Entry] = []
        for seq in unique[start...] + unique[..<start] {
            // Wrapping distance from the current entry's PID: 1...16 fits its bitmask.
            if let last = entries.last, case let distance = seq &- last.packetID, (1...16).contains(distance) {
                entries[entries.count - 1].lostBitmask |= 1 << (distance - 1)
            } else {
                entries.append(Entry(packetID: seq))
            }
        }
        self.init(senderSSRC: senderSSRC, mediaSSRC: mediaSSRC, entries: entries)
    }

    /// Every sequence number the entries mark lost, entry by entry, each PID before its bitmask's.
    public var lostSequenceNumbers: [UInt16] {
        var lost: [UInt16] = []
        lost.reserveCapacity(entries.count * 2)
        for entry in entries {
            lost.append(entry.packetID)
            for bit in 0..<16 where entry.lostBitmask & (1 << bit) != 0 {
                lost.append(entry.packetID &+ UInt16(bit + 1))
            }
        }
        return lost
    }

    /// Parses one NACK packet (bytes past its declared length are ignored).
    public init(bytes: [UInt8]) throws(RTCPError) {
        let (header, body, _) = try RTCPHeader.parse(bytes, at: 0)
        try self.init(header, bytes, body)
    }

    init(_ header: RTCPHeader, _ b: [UInt8], _ body: Range<Int>) throws(RTCPError) {
        let pt = RTCPHeader.transportFeedbackType
        try header.checkFeedback(packetType: pt, format: Self.formatType, body: body)
        // The body is whole words (length field), so after the 8-byte common part come whole entries.
        guard body.count % 4 == 0 else { throw .truncatedBody(packetType: pt) }
        let entries = stride(from: body.lowerBound + 8, to: body.upperBound, by: 4).map {
            Entry(packetID: readUInt16(b, $0), lostBitmask: readUInt16(b, $0 + 2))
        }
        self.init(
            senderSSRC: readUInt32(b, body.lowerBound), mediaSSRC: readUInt32(b, body.lowerBound + 4),
            entries: entries)
    }

    public func append(to out: inout [UInt8]) {
        let list = entries.prefix(65533)
        out.reserve(additional: 12 + 4 * list.count)
        RTCPHeader(
            count: Self.formatType, packetType: RTCPHeader.transportFeedbackType,
            length: UInt16(2 + list.count)
        ).append(to: &out)
        out.appendBigEndian(senderSSRC)
        out.appendBigEndian(mediaSSRC)
        for entry in list {
            out.appendBigEndian(entry.packetID)
            out.appendBigEndian(entry.lostBitmask)
        }
    }
}
