/// Splits H.264 access units into RTP payloads, packetization-mode 1 (RFC 6184 §5.6, §5.8): a NAL unit that fits
/// goes alone (single NAL unit packet), a larger one in FU-A fragments. A keyframe is preceded by the sequence and
/// picture parameter sets, each in a packet of its own, so a receiver joining at any keyframe can decode it.
/// SEI units (x264's version banner) are not sent.
public struct H264Packetizer: Sendable {
    /// The largest payload (FU headers included).
    public let maxPayloadSize: Int

    public init(maxPayloadSize: Int = 1200) {
        precondition(maxPayloadSize > 2, "a payload must hold the FU headers and one byte")
        self.maxPayloadSize = maxPayloadSize
    }

    /// Calls `emit` for each payload of the access unit in `avcc` (NAL units with 4-byte big-endian lengths), in
    /// order: its prefix (the FU indicator and header, or nothing), the rest of the payload, and whether it is the
    /// access unit's last (the RTP marker bit). `parameterSets` go first when given. A malformed length ends the
    /// access unit where it stands.
    public func packetize(
        avcc: UnsafeRawBufferPointer, parameterSets: (sps: [UInt8], pps: [UInt8])? = nil,
        _ emit: (_ prefix: (UInt8, UInt8), _ prefixCount: Int, _ rest: UnsafeRawBufferPointer, _ last: Bool) -> Void
    ) {
        // The slices to send, found first so the last one can carry the marker.
        var lastStart = -1
        var offset = 0
        while offset + 4 <= avcc.count {
            let length =
                Int(avcc[offset]) << 24 | Int(avcc[offset + 1]) << 16 | Int(avcc[offset + 2]) << 8
                | Int(avcc[offset + 3])
            guard length > 0, offset + 4 + length <= avcc.count else { break }
            if avcc[offset + 4] & 0x1F != Self.sei { lastStart = offset + 4 }
            offset += 4 + length
        }
        guard lastStart >= 0 else { return }
        if let parameterSets {
            if !parameterSets.sps.isEmpty { parameterSets.sps.withUnsafeBytes { send($0, last: false, emit) } }
            if !parameterSets.pps.isEmpty { parameterSets.pps.withUnsafeBytes { send($0, last: false, emit) } }
        }
        offset = 0
        while offset + 4 <= avcc.count {
            let length =
                Int(avcc[offset]) << 24 | Int(avcc[offset + 1]) << 16 | Int(avcc[offset + 2]) << 8
                | Int(avcc[offset + 3])
            guard length > 0, offset + 4 + length <= avcc.count else { break }
            let start = offset + 4
            if avcc[start] & 0x1F != Self.sei {
                send(UnsafeRawBufferPointer(rebasing: avcc[start..<(start + length)]), last: start == lastStart, emit)
            }
            offset = start + length
        }
    }

    static let sei: UInt8 = 6

    private func send(
        _ unit: UnsafeRawBufferPointer, last: Bool,
        _ emit: (_ prefix: (UInt8, UInt8), _ prefixCount: Int, _ rest: UnsafeRawBufferPointer, _ last: Bool) -> Void
    ) {
        if unit.count <= maxPayloadSize {
            return emit((0, 0), 0, unit, last)
        }
        let header = unit[0]
        let indicator = (header & 0xE0) | H264Payload.fuA
        let body = UnsafeRawBufferPointer(rebasing: unit[1...])
        let room = maxPayloadSize - 2
        let count = (body.count + room - 1) / room
        let base = body.count / count
        let extra = body.count % count
        var offset = 0
        for i in 0..<count {
            let size = base + (i < extra ? 1 : 0)
            let fuHeader = (i == 0 ? 0x80 : 0) | (i == count - 1 ? 0x40 : 0) | (header & 0x1F)
            emit(
                (indicator, fuHeader), 2, UnsafeRawBufferPointer(rebasing: body[offset..<(offset + size)]),
                last && i == count - 1)
            offset += size
        }
    }
}
