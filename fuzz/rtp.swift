import RTP

/// RTP header parsing: no crash, and whatever parses serialises back to the same packet.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRTP(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    _ = classifyPacket(bytes)
    if let packet = try? RTPPacket(bytes: bytes) {
        require((try? RTPPacket(bytes: packet.serialized())) == packet, "RTP round trip changed the packet")
        require(packet.payload.count <= size, "payload larger than the datagram")
    }
    return 0
}
