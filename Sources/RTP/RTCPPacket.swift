/// An RTCP wire type: writes itself onto the end of a buffer, so a compound datagram is built in one reused
/// buffer (the server's feedback path); `serialized()` gives the same bytes in a new array.
public protocol RTCPWireFormat {
    func append(to out: inout [UInt8])
}

extension RTCPWireFormat {
    public func serialized() -> [UInt8] {
        var out: [UInt8] = []
        append(to: &out)
        return out
    }
}

/// One packet of a compound RTCP datagram (RFC 3550 §6.1), decoded when Cohost understands its type.
public enum RTCPPacket: Equatable, Sendable, RTCPWireFormat {
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

    public func append(to out: inout [UInt8]) {
        switch self {
        case .senderReport(let p): p.append(to: &out)
        case .receiverReport(let p): p.append(to: &out)
        case .sourceDescription(let p): p.append(to: &out)
        case .bye(let p): p.append(to: &out)
        case .nack(let p): p.append(to: &out)
        case .pli(let p): p.append(to: &out)
        case .fir(let p): p.append(to: &out)
        case .remb(let p): p.append(to: &out)
        case .other(_, let bytes): out.append(contentsOf: bytes)
        }
    }
}

/// Splits a compound RTCP datagram into its packets and decodes the known ones.
///
/// Every packet must have version 2 and a length that fits; one bad packet fails the whole datagram
/// (RFC 3550 §6.4.1 validity checks), since its length can no longer be trusted to find the next.
/// The "must start with SR/RR" rule is not enforced: reduced-size RTCP (RFC 5506) sends lone PLIs.
public func parseCompoundRTCP(_ bytes: [UInt8]) throws(RTCPError) -> [RTCPPacket] {
    var packets: [RTCPPacket] = []
    try parseCompoundRTCP(bytes, into: &packets)
    return packets
}

/// `parseCompoundRTCP` into the caller's array (emptied first, its capacity kept): the ingest path reuses one
/// per socket. Empty after a throw.
public func parseCompoundRTCP(_ bytes: [UInt8], into packets: inout [RTCPPacket]) throws(RTCPError) {
    packets.removeAll(keepingCapacity: true)
    guard !bytes.isEmpty else { throw .tooShort }
    var offset = 0
    do {
        while offset < bytes.count {
            let (header, body, end) = try RTCPHeader.parse(bytes, at: offset)
            packets.append(try decodeRTCPPacket(header, bytes, body, offset..<end))
            offset = end
        }
    } catch {
        packets.removeAll(keepingCapacity: true)
        throw error
    }
}

private func decodeRTCPPacket(
    _ header: RTCPHeader, _ bytes: [UInt8], _ body: Range<Int>,
    _ whole: Range<Int>
) throws(RTCPError) -> RTCPPacket {
    switch header.packetType {
    case RTCPHeader.senderReportType:
        return .senderReport(try SenderReport(header, bytes, body))
    case RTCPHeader.receiverReportType:
        return .receiverReport(try ReceiverReport(header, bytes, body))
    case RTCPHeader.sourceDescriptionType:
        return .sourceDescription(try SourceDescription(header, bytes, body))
    case RTCPHeader.goodbyeType:
        return .bye(try Goodbye(header, bytes, body))
    case RTCPHeader.transportFeedbackType where header.count == GenericNACK.formatType:
        return .nack(try GenericNACK(header, bytes, body))
    case RTCPHeader.payloadFeedbackType where header.count == PictureLossIndication.formatType:
        return .pli(try PictureLossIndication(header, bytes, body))
    case RTCPHeader.payloadFeedbackType where header.count == FullIntraRequest.formatType:
        return .fir(try FullIntraRequest(header, bytes, body))
    case RTCPHeader.payloadFeedbackType where header.count == ReceiverEstimatedMaximumBitrate.formatType:
        // FMT=15 is every application-layer feedback; only the "REMB" one is decoded, the rest kept whole.
        do {
            return .remb(try ReceiverEstimatedMaximumBitrate(header, bytes, body))
        } catch .wrongApplicationIdentifier {
            return .other(packetType: header.packetType, bytes: Array(bytes[whole]))
        }
    default:
        return .other(packetType: header.packetType, bytes: Array(bytes[whole]))
    }
}

/// Concatenates packets into one compound datagram.
public func serializeCompoundRTCP(_ packets: [RTCPPacket]) -> [UInt8] {
    var out: [UInt8] = []
    for packet in packets { packet.append(to: &out) }
    return out
}
