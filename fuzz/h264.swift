import RTP

/// H.264 (RFC 6184) single NAL / STAP-A / FU-A reassembly: no crash, access units stay bounded; and the sequence
/// parameter set reader that sizes each access unit before it is decoded.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzH264(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var depacketizer = H264Depacketizer(maxAccessUnitBytes: 8192)
    for (packet, afterLoss) in PacketRecords(UnsafeBufferPointer(start: data, count: size)) {
        if let frame = depacketizer.push(packet, afterLoss: afterLoss) {
            require(frame.data.count <= 8192, "access unit over the bound")
            checkDeclaredSize(frame.data)
        }
        while let frame = depacketizer.takeReadyFrame() {
            require(frame.data.count <= 8192, "access unit over the bound")
            checkDeclaredSize(frame.data)
        }
        // The packet itself as an access unit: arbitrary bytes behind a start code reach the SPS reader directly.
        checkDeclaredSize([0, 0, 0, 1] + packet.payload)
    }
    return 0
}

/// A declared size is positive and no larger than 16-bit macroblock counts allow.
private func checkDeclaredSize(_ accessUnit: [UInt8]) {
    guard let size = KeyframeSize.h264(accessUnit) else { return }
    require(size.width > 0 && size.height > 0, "a declared size that is not positive")
}
