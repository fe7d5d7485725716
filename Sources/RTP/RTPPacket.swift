/// One RTP packet (RFC 3550 §5.1), parsed into owned values.
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |V=2|P|X|  CC   |M|     PT      |       sequence number         |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                           timestamp                           |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |           synchronization source (SSRC) identifier            |
/// +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
/// |            contributing source (CSRC) identifiers             |
/// |                             ....                              |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// Header extension, present when X = 1 (§5.3.1):
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |      defined by profile       |           length              |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                        header extension                       |
/// |                             ....                              |
/// ```
/// Padding (P = 1): the last byte counts the padding bytes, itself included.
public struct RTPPacket: Equatable, Sendable {
    public var marker: Bool
    /// 7 bits; higher bits are ignored when serialising.
    public var payloadType: UInt8
    public var sequenceNumber: UInt16
    public var timestamp: UInt32
    public var ssrc: UInt32
    /// At most 15; extra entries are dropped when serialising.
    public var csrcs: [UInt32]
    /// The 16-bit "defined by profile" field; nil means no header extension (X = 0).
    public var extensionProfile: UInt16?
    /// The extension words, without the 4-byte preamble. A length that is not a multiple of 4 is
    /// zero-filled up to the next word when serialising.
    public var extensionData: [UInt8]
    /// The payload with any padding already removed.
    public var payload: [UInt8]
    /// Number of padding bytes including the count byte; 0 means no padding. Serialising clamps to 0...255.
    public var paddingLength: Int

    public init(
        marker: Bool = false, payloadType: UInt8, sequenceNumber: UInt16, timestamp: UInt32,
        ssrc: UInt32, csrcs: [UInt32] = [], extensionProfile: UInt16? = nil,
        extensionData: [UInt8] = [], payload: [UInt8] = [], paddingLength: Int = 0
    ) {
        self.marker = marker
        self.payloadType = payloadType
        self.sequenceNumber = sequenceNumber
        self.timestamp = timestamp
        self.ssrc = ssrc
        self.csrcs = csrcs
        self.extensionProfile = extensionProfile
        self.extensionData = extensionData
        self.payload = payload
        self.paddingLength = paddingLength
    }

    /// Parses one packet; validates the version, every length field and the padding count.
    public init(bytes: [UInt8]) throws(RTPError) {
        self.init(payloadType: 0, sequenceNumber: 0, timestamp: 0, ssrc: 0)
        try parse(bytes)
    }

    /// Parses `bytes` into this packet, reusing the storage of its payload, CSRC and extension arrays:
    /// no allocation once they are large enough (the per-datagram hot path keeps one packet and parses
    /// every datagram into it). Same validation as `init(bytes:)`; on a throw the packet is unchanged.
    public mutating func parse(_ bytes: [UInt8]) throws(RTPError) {
        guard bytes.count >= 12 else { throw .tooShort }
        let version = bytes[0] >> 6
        guard version == 2 else { throw .badVersion(version) }
        let hasPadding = bytes[0] & 0x20 != 0
        let hasExtension = bytes[0] & 0x10 != 0
        let csrcCount = Int(bytes[0] & 0x0F)

        // Validate every length before writing anything.
        var offset = 12
        guard bytes.count >= offset + 4 * csrcCount else { throw .csrcOverrun }
        let csrcStart = offset
        offset += 4 * csrcCount
        var profile: UInt16?
        var extensionRange = 0..<0
        if hasExtension {
            guard bytes.count >= offset + 4 else { throw .extensionOverrun }
            profile = readUInt16(bytes, offset)
            let words = Int(readUInt16(bytes, offset + 2))
            offset += 4
            guard bytes.count >= offset + 4 * words else { throw .extensionOverrun }
            extensionRange = offset..<offset + 4 * words
            offset += 4 * words
        }
        var end = bytes.count
        var padding = 0
        if hasPadding {
            // A P bit with nothing after the header has no count byte to read.
            guard end > offset else { throw .badPadding }
            padding = Int(bytes[end - 1])
            guard padding > 0, padding <= end - offset else { throw .badPadding }
            end -= padding
        }

        marker = bytes[1] & 0x80 != 0
        payloadType = bytes[1] & 0x7F
        sequenceNumber = readUInt16(bytes, 2)
        timestamp = readUInt32(bytes, 4)
        ssrc = readUInt32(bytes, 8)
        // Cleared keeping capacity, then refilled: in place while this packet's arrays are uniquely held.
        csrcs.removeAll(keepingCapacity: true)
        for i in 0..<csrcCount { csrcs.append(readUInt32(bytes, csrcStart + 4 * i)) }
        extensionProfile = profile
        extensionData.removeAll(keepingCapacity: true)
        extensionData.append(contentsOf: bytes[extensionRange])
        payload.removeAll(keepingCapacity: true)
        payload.append(contentsOf: bytes[offset..<end])
        paddingLength = padding
    }

    /// Makes this packet equal to `other`, copying its arrays into this packet's storage (kept, and grown
    /// only when too small): how the jitter buffer fills its reused slots without an allocation per packet.
    public mutating func assign(_ other: RTPPacket) {
        marker = other.marker
        payloadType = other.payloadType
        sequenceNumber = other.sequenceNumber
        timestamp = other.timestamp
        ssrc = other.ssrc
        csrcs.removeAll(keepingCapacity: true)
        csrcs.append(contentsOf: other.csrcs)
        extensionProfile = other.extensionProfile
        extensionData.removeAll(keepingCapacity: true)
        extensionData.append(contentsOf: other.extensionData)
        payload.removeAll(keepingCapacity: true)
        payload.append(contentsOf: other.payload)
        paddingLength = other.paddingLength
    }

    /// Bytes before the payload: fixed header, CSRCs and header extension.
    public var headerLength: Int {
        12 + 4 * min(csrcs.count, 15) + (extensionProfile == nil ? 0 : 4 + (extensionData.count + 3) / 4 * 4)
    }

    /// The wire form; `RTPPacket(bytes: p.serialized()) == p` for every packet within the field limits.
    /// Padding bytes are written as zeros (their content carries no meaning, RFC 3550 §5.1).
    public func serialized() -> [UInt8] {
        let csrcList = csrcs.prefix(15)
        let padding = min(max(paddingLength, 0), 255)
        let extensionWords = min((extensionData.count + 3) / 4, Int(UInt16.max))
        var out: [UInt8] = []
        out.reserveCapacity(headerLength + payload.count + padding)
        out.append(0x80 | (padding > 0 ? 0x20 : 0) | (extensionProfile != nil ? 0x10 : 0) | UInt8(csrcList.count))
        out.append((marker ? 0x80 : 0) | (payloadType & 0x7F))
        out.appendBigEndian(sequenceNumber)
        out.appendBigEndian(timestamp)
        out.appendBigEndian(ssrc)
        for csrc in csrcList { out.appendBigEndian(csrc) }
        if let extensionProfile {
            out.appendBigEndian(extensionProfile)
            out.appendBigEndian(UInt16(extensionWords))
            out.append(contentsOf: extensionData.prefix(extensionWords * 4))
            out.append(
                contentsOf: repeatElement(0, count: extensionWords * 4 - min(extensionData.count, extensionWords * 4)))
        }
        out.append(contentsOf: payload)
        if padding > 0 {
            out.append(contentsOf: repeatElement(0, count: padding - 1))
            out.append(UInt8(padding))
        }
        return out
    }
}
