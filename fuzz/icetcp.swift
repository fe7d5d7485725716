// ICE-TCP's RFC 4571 framing and the ICE server URIs of the settings: no input crashes them; the frames the framer
// yields, whatever the reads' sizes, are exactly the length-prefixed frames of the whole stream; a URI that parses
// keeps its text and a port in range.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let first = bytes.first else { return 0 }
    // The first byte sets the reads' sizes: 1...256 bytes, as a slow or bursting peer would send.
    let chunk = Int(first) + 1
    let stream = Array(bytes.dropFirst())
    var framer = ICETCPFramer(capacity: 16)
    var got: [[UInt8]] = []
    var frame: [UInt8] = []
    var offset = 0
    while offset < stream.count {
        let end = min(offset + chunk, stream.count)
        let taken = framer.append(stream[offset..<end])
        require(taken == end - offset, "a read of \(end - offset) bytes did not fit with the frames taken out")
        offset = end
        while framer.next(into: &frame) { got.append(frame) }
    }
    var expected: [[UInt8]] = []
    var at = 0
    while stream.count - at >= 2 {
        let length = Int(stream[at]) << 8 | Int(stream[at + 1])
        guard stream.count - at - 2 >= length else { break }
        expected.append(Array(stream[(at + 2)..<(at + 2 + length)]))
        at += 2 + length
    }
    require(got == expected, "framer yielded \(got.count) frames, the stream holds \(expected.count)")
    require(framer.buffered == stream.count - at, "framer holds \(framer.buffered) bytes, \(stream.count - at) remain")
    let text = String(decoding: stream.prefix(200), as: UTF8.self)
    if let url = ICEServerURL(text) {
        require(url.text == text && (1...65_535).contains(url.port) && !url.host.isEmpty, "odd URI \(text)")
    }
    return 0
}
