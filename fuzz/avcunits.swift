/// A source's H.264 as its container frames it (`H264Units`): an AVCDecoderConfigurationRecord or Annex B extradata,
/// then packets of length-prefixed or start-code NAL units, rewritten to 4-byte lengths. No crash, and what comes out
/// is well formed: every unit's length is positive and the lengths add up to the bytes written, none of them more
/// than the packet held.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAVCUnits(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    guard let first = bytes.first else { return 0 }
    // The first byte: how much of the rest is extradata; the remainder is cut into packets at each 0xFF 0xFE.
    let extraCount = min(Int(first), size - 1)
    let extradata = UnsafeRawBufferPointer(rebasing: bytes[1..<(1 + extraCount)])
    guard var units = H264Units(extradata: extradata) else { return 0 }
    if let format = units.format { require(format.profileLevelID.count == 6, "a profile-level-id of six digits") }
    var start = 1 + extraCount
    var i = start
    while i <= size {
        let cut = i == size || (i + 1 < size && bytes[i] == 0xFF && bytes[i + 1] == 0xFE)
        if cut {
            let packet = UnsafeRawBufferPointer(rebasing: bytes[start..<i])
            _ = units.rewrite(packet)
            check(units.avcc, from: packet.count)
            start = min(size, i + 2)
            i = start
            if i == size { break }
        } else {
            i += 1
        }
    }
    return 0
}

private func check(_ avcc: [UInt8], from packetBytes: Int) {
    var offset = 0
    var payload = 0
    while offset < avcc.count {
        require(offset + 4 <= avcc.count, "a length cut short")
        let length =
            Int(avcc[offset]) << 24 | Int(avcc[offset + 1]) << 16 | Int(avcc[offset + 2]) << 8 | Int(avcc[offset + 3])
        require(length > 0 && offset + 4 + length <= avcc.count, "a unit's length beyond what was written")
        payload += length
        offset += 4 + length
    }
    require(payload <= packetBytes, "more unit bytes out than the packet held")
}
