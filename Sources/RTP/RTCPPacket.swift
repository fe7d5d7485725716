/// One packet of a compound RTCP datagram (RFC 3550 §6.1), decoded when Cohost understands its type.
public enum RTCPPacket: Equatable, Sendable {
    case senderReport(SenderReport)
    case receiverReport(ReceiverReport)
    case pli(PictureLossIndication)
    case bye(Goodbye)
    /// Any other type (SDES, NACK, REMB, APP, ...): the whole packet as received, header included.
    case other(packetType: UInt8, bytes: [UInt8])

    public func serialized() -> [UInt8] {
        switch self {
        case .senderReport(let p): p.serialized()
        case .receiverReport(let p): p.serialized()
        case .pli(let p): p.serialized()
        case .bye(let p): p.serialized()
        case .other(_, let bytes): bytes
        }
    }
}

/// Splits a compound RTCP datagram into its packets and decodes the known ones.
///
/// Every packet must have version 2 and a length that fits; one bad packet fails the whole datagram
/// (RFC 3550 §6.4.1 validity checks), since its length can no longer be trusted to find the next.
/// The "must start with SR/RR" rule is not enforced: reduced-size RTCP (RFC 5506) sends lone PLIs.
public func parseCompoundRTCP(_ bytes: [UInt8]) throws(RTCPError) -> [RTCPPacket] {
    guard !bytes.isEmpty else { throw .tooShort }
    var packets: [RTCPPacket] = []
    var offset = 0
    while offset < bytes.count {
        let (header, body, end) = try RTCPHeader.parse(bytes, at: offset)
        switch header.packetType {
        case RTCPHeader.senderReportType:
            packets.append(.senderReport(try SenderReport(header, bytes, body)))
        case RTCPHeader.receiverReportType:
            packets.append(.receiverReport(try ReceiverReport(header, bytes, body)))
        case RTCPHeader.goodbyeType:
            packets.append(.bye(try Goodbye(header, bytes, body)))
        case RTCPHeader.payloadFeedbackType where header.count == PictureLossIndication.formatType:
            packets.append(.pli(try PictureLossIndication(header, bytes, body)))
        default:
            packets.append(.other(packetType: header.packetType, bytes: Array(bytes[offset..<end])))
        }
        offset = end
    }
    return packets
}

/// Concatenates packets into one compound datagram.
public func serializeCompoundRTCP(_ packets: [RTCPPacket]) -> [UInt8] {
    packets.reduce(into: []) { $0.append(contentsOf: $1.serialized()) }
}
