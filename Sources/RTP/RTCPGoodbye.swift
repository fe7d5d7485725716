/// RTCP Goodbye (RFC 3550 §6.6): the listed sources are leaving, optionally with a reason.
///
/// ```
///        0                   1                   2                   3
///        0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
///       +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///       |V=2|P|    SC   |   PT=BYE=203  |             length            |
///       +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///       |                           SSRC/CSRC                           |
///       +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///       :                              ...                              :
///       +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
/// (opt) |     length    |               reason for leaving            ...
///       +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
public struct Goodbye: Equatable, Sendable, RTCPWireFormat {
    /// At most 31 (the SC field is 5 bits); extra sources are dropped when serialising.
    public var sources: [UInt32]
    /// UTF-8 text, at most 255 bytes on the wire (cut at a character boundary when longer).
    /// A reason that is not valid UTF-8 on the wire is dropped (nil): repairing it with replacement
    /// characters would grow it past 255 bytes and break the parse/serialise round trip (fuzz/rtcp).
    public var reason: String?

    public init(sources: [UInt32], reason: String? = nil) {
        self.sources = sources
        self.reason = reason
    }

    /// Parses one BYE packet (bytes past its declared length are ignored).
    public init(bytes: [UInt8]) throws(RTCPError) {
        let (header, body, _) = try RTCPHeader.parse(bytes, at: 0)
        try self.init(header, bytes, body)
    }

    init(_ header: RTCPHeader, _ b: [UInt8], _ body: Range<Int>) throws(RTCPError) {
        let pt = RTCPHeader.goodbyeType
        guard header.packetType == pt else { throw .wrongPacketType(expected: pt, got: header.packetType) }
        let count = Int(header.count)
        guard body.count >= 4 * count else { throw .truncatedBody(packetType: pt) }
        let sources = (0..<count).map { readUInt32(b, body.lowerBound + 4 * $0) }
        var reason: String?
        let reasonStart = body.lowerBound + 4 * count
        if reasonStart < body.upperBound {
            let length = Int(b[reasonStart])
            guard body.upperBound - reasonStart - 1 >= length else { throw .truncatedBody(packetType: pt) }
            reason = String(validating: b[reasonStart + 1..<reasonStart + 1 + length], as: UTF8.self)
        }
        self.init(sources: sources, reason: reason)
    }

    /// The reason's UTF-8 bytes, cut to 255 at a character boundary.
    private var reasonBytes: [UInt8]? {
        guard let reason else { return nil }
        var bytes: [UInt8] = []
        for scalar in reason.unicodeScalars {
            let encoded = Array(String(scalar).utf8)
            if bytes.count + encoded.count > 255 { break }
            bytes.append(contentsOf: encoded)
        }
        return bytes
    }

    public func append(to out: inout [UInt8]) {
        let list = sources.prefix(31)
        var tail: [UInt8] = []
        if let text = reasonBytes {
            tail.append(UInt8(text.count))
            tail.append(contentsOf: text)
        }
        let bodyBytes = 4 * list.count + (tail.count + 3) / 4 * 4
        out.reserve(additional: 4 + bodyBytes)
        RTCPHeader(
            count: UInt8(list.count), packetType: RTCPHeader.goodbyeType,
            length: RTCPHeader.lengthField(bodyBytes: bodyBytes)
        ).append(to: &out)
        for source in list { out.appendBigEndian(source) }
        out.appendWordAligned(tail)
    }
}
