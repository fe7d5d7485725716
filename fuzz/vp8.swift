import RTP

/// VP8 payload descriptors and frame reassembly: no crash, frames never exceed the size bound.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzVP8(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var depacketizer = VP8Depacketizer(maxFrameBytes: 4096)
    for (packet, afterLoss) in PacketRecords(UnsafeBufferPointer(start: data, count: size)) {
        if let descriptor = try? VP8PayloadDescriptor(payload: packet.payload) {
            require(descriptor.headerLength < packet.payload.count, "descriptor longer than its payload")
        }
        if let frame = depacketizer.push(packet, afterLoss: afterLoss) {
            require(frame.data.count <= 4096, "frame over the bound")
        }
        while let frame = depacketizer.takeReadyFrame() { require(frame.data.count <= 4096, "frame over the bound") }
    }
    return 0
}
