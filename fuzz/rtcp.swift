import RTP

/// Compound RTCP parsing: no crash; whatever parses serialises and parses back to the same values.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRTCP(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let packets = try? parseCompoundRTCP(bytes) {
        let again = try? parseCompoundRTCP(serializeCompoundRTCP(packets))
        require(again == packets, "RTCP round trip changed \(packets)")
    }
    return 0
}
