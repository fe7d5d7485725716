/// RTCP Source Description (RFC 3550 §6.5): per source, a list of items such as the CNAME.
///
/// ```
///         0                   1                   2                   3
///         0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
///        +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// header |V=2|P|    SC   |  PT=SDES=202  |             length            |
///        +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
/// chunk  |                          SSRC/CSRC_1                          |
///   1    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///        |                           SDES items                          |
///        |                              ...                              |
///        +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
/// chunk  |                          SSRC/CSRC_2                          |
///   2    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///        |                           SDES items                          |
///        |                              ...                              |
///        +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
///
/// item:   0                   1                   2                   3
///         0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
///        +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///        |    CNAME=1    |     length    | user and domain name        ...
///        +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
/// Each chunk's item list ends with one or more zero bytes (the first is an item type of 0, the
/// rest pad the chunk to a 32-bit boundary).
public struct SourceDescription: Equatable, Sendable, RTCPWireFormat {
    /// One item: a type (1 CNAME, 2 NAME, 3 EMAIL, 4 PHONE, 5 LOC, 6 TOOL, 7 NOTE, 8 PRIV) and its value.
    public struct Item: Equatable, Sendable {
        public static let cnameType: UInt8 = 1

        public var type: UInt8
        /// Raw value bytes, at most 255 on the wire (longer values are cut when serialising).
        /// Kept as bytes so every item type, PRIV's inner prefix included, round-trips untouched.
        public var value: [UInt8]

        public init(type: UInt8, value: [UInt8]) {
            self.type = type
            self.value = value
        }

        /// A CNAME item; the text is cut to 255 UTF-8 bytes at a Unicode scalar boundary (so it stays valid UTF-8).
        public static func cname(_ text: String) -> Item {
            var bytes: [UInt8] = []
            for scalar in text.unicodeScalars {
                let encoded = Array(String(scalar).utf8)
                if bytes.count + encoded.count > 255 { break }
                bytes.append(contentsOf: encoded)
            }
            return Item(type: cnameType, value: bytes)
        }

        /// The value as text; invalid UTF-8 from the wire is repaired with replacement characters.
        public var text: String { String(decoding: value, as: UTF8.self) }
    }

    /// The items describing one source.
    public struct Chunk: Equatable, Sendable {
        public var source: UInt32
        /// Items in wire order. Type 0 cannot be sent (it ends the list) and is skipped when serialising.
        public var items: [Item]

        public init(source: UInt32, items: [Item]) {
            self.source = source
            self.items = items
        }

        /// The first CNAME item's text.
        public var cname: String? { items.first { $0.type == Item.cnameType }?.text }
    }

    /// At most 31 (the SC field is 5 bits); extra chunks are dropped when serialising.
    public var chunks: [Chunk]

    public init(chunks: [Chunk]) {
        self.chunks = chunks
    }

    /// Parses one SDES packet (bytes past its declared length are ignored).
    public init(bytes: [UInt8]) throws(RTCPError) {
        let (header, body, _) = try RTCPHeader.parse(bytes, at: 0)
        try self.init(header, bytes, body)
    }

    init(_ header: RTCPHeader, _ b: [UInt8], _ body: Range<Int>) throws(RTCPError) {
        let pt = RTCPHeader.sourceDescriptionType
        guard header.packetType == pt else { throw .wrongPacketType(expected: pt, got: header.packetType) }
        var chunks: [Chunk] = []
        var offset = body.lowerBound
        for _ in 0..<header.count {
            guard body.upperBound - offset >= 4 else { throw .truncatedBody(packetType: pt) }
            var chunk = Chunk(source: readUInt32(b, offset), items: [])
            offset += 4
            while true {
                guard offset < body.upperBound else { throw .truncatedBody(packetType: pt) }
                let type = b[offset]
                if type == 0 {
                    // The end marker, then zero bytes up to the next 32-bit boundary (the body starts on one).
                    offset = body.lowerBound + (offset - body.lowerBound + 4) / 4 * 4
                    guard offset <= body.upperBound else { throw .truncatedBody(packetType: pt) }
                    break
                }
                guard body.upperBound - offset >= 2 else { throw .truncatedBody(packetType: pt) }
                let length = Int(b[offset + 1])
                guard body.upperBound - offset - 2 >= length else { throw .truncatedBody(packetType: pt) }
                chunk.items.append(Item(type: type, value: Array(b[offset + 2..<offset + 2 + length])))
                offset += 2 + length
            }
            chunks.append(chunk)
        }
        self.init(chunks: chunks)
    }

    /// Items (and then chunks) that would take the body past what the 16-bit length field can
    /// describe are dropped, so the length always matches the bytes written.
    public func append(to out: inout [UInt8]) {
        let maxBody = Int(UInt16.max) * 4
        var body: [UInt8] = []
        var written = 0
        for chunk in chunks.prefix(31) {
            guard maxBody - body.count >= 8 else { break }  // the SSRC and an empty, padded item list
            body.appendBigEndian(chunk.source)
            var items: [UInt8] = []
            for item in chunk.items where item.type != 0 {
                let value = item.value.prefix(255)
                // The item, the end marker and padding must still fit (body and limit are word multiples).
                guard maxBody - body.count - items.count >= 2 + value.count + 1 else { break }
                items.append(item.type)
                items.append(UInt8(value.count))
                items.append(contentsOf: value)
            }
            items.append(0)  // end of the item list; appendWordAligned adds the padding zeros
            body.appendWordAligned(items)
            written += 1
        }
        out.reserve(additional: 4 + body.count)
        RTCPHeader(
            count: UInt8(written), packetType: RTCPHeader.sourceDescriptionType,
            length: RTCPHeader.lengthField(bodyBytes: body.count)
        ).append(to: &out)
        out.append(contentsOf: body)
    }
}
