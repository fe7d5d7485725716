/// The structure of one H.264 RTP payload (RFC 6184 §5.2–5.8, packetization-mode 1), checked
/// against the payload's length. Every payload starts with a one-byte NAL unit header whose type
/// says what follows:
///
/// ```
///   NAL unit header (RFC 6184 §5.3)       FU-A (type 28, RFC 6184 §5.8)
///   +---------------+                     +---------------+---------------+
///   |0|1|2|3|4|5|6|7|                     | FU indicator  |   FU header   |
///   +-+-+-+-+-+-+-+-+                     |F|NRI|  Type=28|S|E|R|  Type   |
///   |F|NRI|  Type   |                     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+ FU payload ...
///   +---------------+
///
///   STAP-A (type 24, RFC 6184 §5.7.1)
///    0                   1                   2                   3
///    0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
///   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///   |STAP-A NAL HDR |         NALU 1 Size           | NALU 1 HDR    |
///   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///   |                         NALU 1 Data                           |
///   :                                                               :
///   +               +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///   |               | NALU 2 Size                   | NALU 2 HDR    |
///   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///   |                         NALU 2 Data                           |
///   :                                                               :
/// ```
public enum H264Payload: Equatable, Sendable {
    /// A whole NAL unit (types 1–23): the payload is the NAL unit, header byte included.
    case single
    /// STAP-A: whole NAL units at these ranges of the payload (each non-empty, header byte included).
    case aggregation([Range<Int>])
    /// FU-A: a piece of one NAL unit; `data` is the range of the payload after the two header bytes.
    case fragment(H264Fragment)

    /// RTP payload types (RFC 6184 §5.4, Table 3).
    public static let stapA: UInt8 = 24
    public static let stapB: UInt8 = 25
    public static let mtap16: UInt8 = 26
    public static let mtap24: UInt8 = 27
    public static let fuA: UInt8 = 28
    public static let fuB: UInt8 = 29

    /// NAL unit types (ITU-T H.264 Table 7-1) the depacketizer looks at.
    public static let nonIDRSlice: UInt8 = 1
    public static let idrSlice: UInt8 = 5
    public static let sequenceParameterSet: UInt8 = 7
    public static let pictureParameterSet: UInt8 = 8

    /// Parses the payload structure. Packetization-mode 1 allows only single NAL units, STAP-A and
    /// FU-A; STAP-B, MTAP and FU-B (interleaved mode) and the reserved types 0, 30, 31 are refused.
    public init(payload: [UInt8]) throws(H264PayloadError) {
        guard let first = payload.first else { throw .emptyPayload }
        let type = first & 0x1F
        switch type {
        case 1...23:
            self = .single
        case Self.stapA:
            var units: [Range<Int>] = []
            var offset = 1
            while offset < payload.count {
                guard payload.count - offset >= 2 else { throw .truncatedAggregation }
                let size = Int(readUInt16(payload, offset))
                let start = offset + 2
                // A zero size would be a NAL unit without even its header byte.
                guard size > 0, size <= payload.count - start else { throw .truncatedAggregation }
                units.append(start..<start + size)
                offset = start + size
            }
            guard !units.isEmpty else { throw .truncatedAggregation }
            self = .aggregation(units)
        case Self.fuA:
            guard payload.count >= 2 else { throw .truncatedFragmentHeader }
            let header = payload[1]
            let fragment = H264Fragment(
                start: header & 0x80 != 0, end: header & 0x40 != 0,
                nalHeader: first & 0xE0 | header & 0x1F, data: 2..<payload.count)
            // RFC 6184 §5.8: S and E must not both be set; a whole NAL unit is sent unfragmented.
            guard !(fragment.start && fragment.end) else { throw .fragmentStartAndEnd }
            self = .fragment(fragment)
        case Self.stapB, Self.mtap16, Self.mtap24, Self.fuB:
            throw .interleavedPacketization(type: type)
        default:
            throw .reservedType(type)
        }
    }
}

/// The FU header of one FU-A packet (RFC 6184 §5.8).
public struct H264Fragment: Equatable, Sendable {
    /// S: the first fragment of the NAL unit.
    public var start: Bool
    /// E: the last fragment of the NAL unit.
    public var end: Bool
    /// The fragmented NAL unit's own header: F and NRI from the FU indicator, type from the FU header.
    public var nalHeader: UInt8
    /// Where this fragment's bytes sit in the RTP payload.
    public var data: Range<Int>

    public init(start: Bool, end: Bool, nalHeader: UInt8, data: Range<Int>) {
        self.start = start
        self.end = end
        self.nalHeader = nalHeader
        self.data = data
    }

    public var nalType: UInt8 { nalHeader & 0x1F }
}

/// Why an H.264 RTP payload could not be used.
public enum H264PayloadError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No NAL unit header byte.
    case emptyPayload
    /// A STAP-A size field is cut off, zero, or runs past the end of the payload (or there is no unit).
    case truncatedAggregation
    /// An FU-A without its FU header byte.
    case truncatedFragmentHeader
    /// An FU-A header with both S and E set.
    case fragmentStartAndEnd
    /// STAP-B, MTAP16, MTAP24 or FU-B: interleaved mode (packetization-mode 2), which Cohost does not offer.
    case interleavedPacketization(type: UInt8)
    /// NAL unit type 0, 30 or 31: reserved in RFC 6184.
    case reservedType(UInt8)

    public var description: String {
        switch self {
        case .emptyPayload: "H.264 RTP payload is empty"
        case .truncatedAggregation: "H.264 STAP-A unit size is zero or runs past the end of the payload"
        case .truncatedFragmentHeader: "H.264 FU-A payload has no FU header"
        case .fragmentStartAndEnd: "H.264 FU-A header has both start and end bits set"
        case .interleavedPacketization(let t): "H.264 RTP payload type \(t) needs interleaved mode (unsupported)"
        case .reservedType(let t): "H.264 RTP payload uses reserved NAL unit type \(t)"
        }
    }
}
