/// AMF0 (the onMetaData and voice-level messages, and what an RTMP server sends back): no crash on any bytes,
/// and what decodes encodes to bytes that decode and encode to the same bytes again.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAMF0(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let values = try? decodeAMF0(bytes) {
        let encoded = encodeAMF0(values)
        let again = try? decodeAMF0(encoded)
        require(again != nil, "our own AMF0 does not decode: \(encoded)")
        require(again.map(encodeAMF0) == encoded, "AMF0 encoding is not stable for \(values)")
    }
    return 0
}
