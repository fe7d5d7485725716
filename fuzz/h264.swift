import RTP

/// H.264 (RFC 6184) single NAL / STAP-A / FU-A reassembly: no crash, access units stay bounded.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzH264(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var depacketizer = H264Depacketizer(maxAccessUnitBytes: 8192)
    for (packet, afterLoss) in PacketRecords(UnsafeBufferPointer(start: data, count: size)) {
        if let frame = depacketizer.push(packet, afterLoss: afterLoss) {
            require(frame.data.count <= 8192, "access unit over the bound")
        }
        while let frame = depacketizer.takeReadyFrame() {
            require(frame.data.count <= 8192, "access unit over the bound")
        }
    }
    return 0
}
