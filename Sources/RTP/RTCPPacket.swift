/// One packet of a compound RTCP datagram (RFC 3550 §6.1), decoded when Cohost understands its type.
public enum RTCPPacket: Equatable, Sendable {
    case senderReport(SenderReport)
    case receiverReport(ReceiverReport)
    case sourceDescription(SourceDescription)
    case bye(Goodbye)
    case nack(GenericNACK)
    case pli(PictureLossIndication)
    case fir(FullIntraRequest)
    case remb(ReceiverEstimatedMaximumBitrate)
    /// Any other type (APP, XR, other feedback messages): the whole packet as received, header included.
    case other(packetType: UInt8, bytes: [UInt8])

    public func serialized() -> [UInt8] {
        switch self {
        case .senderReport(let p): p.serialized()
        case .receiverReport(let p): p.serialized()
        case .sourceDescription(let p): p.serialized()
        case .bye(let p): p.serialized()
        case .nack(let p): p.serialized()
        case .pli(let p): p.serialized()
        case .fir(let p): p.serialized()
        case .remb(let p): p.serialized()
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
        case RTCPHeader.sourceDescriptionType:
            packets.append(.sourceDescription(try SourceDescription(header, bytes, body)))
        case RTCPHeader.goodbyeType:
            packets.append(.bye(try Goodbye(header, bytes, body)))
        case RTCPHeader.transportFeedbackType where header.count == GenericNACK.formatType:
            packets.append(.nack(try GenericNACK(header, bytes, body)))
        case RTCPHeader.payloadFeedbackType where header.count == PictureLossIndication.formatType:
            packets.append(.pli(try PictureLossIndication(header, bytes, body)))
        case RTCPHeader.payloadFeedbackType where header.count == FullIntraRequest.formatType:
            packets.append(.fir(try FullIntraRequest(header, bytes, body)))
        case RTCPHeader.payloadFeedbackType where header.count == ReceiverEstimatedMaximumBitrate.formatType:
            // FMT=15 is every application-layer feedback; only the "REMB" one is decoded, the rest kept whole.
            do {
                packets.append(.remb(try ReceiverEstimatedMaximumBitrate(header, bytes, body)))
            } catch .wrongApplicationIdentifier {
                packets.append(.other(packetType: header.packetType, bytes: Array(bytes[offset..<end])))
            }
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
