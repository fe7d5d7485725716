import RTP

/// Splits a fuzzer input into RTP packets for depacketizer targets: each record is one flag byte
/// (bit 0 marker, bit 1 "a packet was lost before this one", bits 2–3 timestamp step, bits 4–7
/// sequence step), a length byte, then that many payload bytes. Headers are synthesised so the
/// fuzzer spends its time on payload formats rather than on headers the RTP target already covers.
struct PacketRecords: Sequence, IteratorProtocol {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var offset = 0
    private var sequence: UInt16 = 0
    private var timestamp: UInt32 = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    mutating func next() -> (packet: RTPPacket, afterLoss: Bool)? {
        guard offset + 2 <= bytes.count else { return nil }
        let flags = bytes[offset]
        let length = Swift.min(Int(bytes[offset + 1]), bytes.count - offset - 2)
        let payload = Array(bytes[(offset + 2)..<(offset + 2 + length)])
        offset += 2 + length
        sequence &+= UInt16(flags >> 4)
        timestamp &+= UInt32((flags >> 2) & 3) * 3000
        let packet = RTPPacket(
            marker: flags & 1 != 0, payloadType: 96, sequenceNumber: sequence,
            timestamp: timestamp, ssrc: 1, payload: payload)
        return (packet, flags & 2 != 0)
    }
}
