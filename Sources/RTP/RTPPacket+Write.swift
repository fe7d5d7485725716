extension RTPPacket {
    /// Writes a packet with the plain 12-byte header (no CSRC, extension or padding) followed by `payload`
    /// into `out`, emptied first with its capacity kept: a sender reusing `out` allocates nothing.
    public static func write(
        payloadType: UInt8, marker: Bool, sequenceNumber: UInt16, timestamp: UInt32, ssrc: UInt32,
        payload: ArraySlice<UInt8>, into out: inout [UInt8]
    ) {
        out.removeAll(keepingCapacity: true)
        out.append(0x80)
        out.append((marker ? 0x80 : 0) | (payloadType & 0x7F))
        out.appendBigEndian(sequenceNumber)
        out.appendBigEndian(timestamp)
        out.appendBigEndian(ssrc)
        out.append(contentsOf: payload)
    }

    /// `write` of a whole payload array.
    public static func write(
        payloadType: UInt8, marker: Bool, sequenceNumber: UInt16, timestamp: UInt32, ssrc: UInt32,
        payload: [UInt8], into out: inout [UInt8]
    ) {
        write(
            payloadType: payloadType, marker: marker, sequenceNumber: sequenceNumber, timestamp: timestamp,
            ssrc: ssrc, payload: payload[...], into: &out)
    }
}
