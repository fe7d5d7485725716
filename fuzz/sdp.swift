import RTP

/// SDP offers: no crash on any text; a parsed offer can always be answered.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSDP(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    if let offer = try? SessionDescription.parse(text) {
        let answer = makeAnswer(
            offer: offer, address: "127.0.0.1", port: 5004,
            media: offer.media.map(AnswerMedia.rejected), sessionId: 1)
        // Our own answer must be readable by our own parser, whatever the offer contained.
        require((try? SessionDescription.parse(answer)) != nil, "cannot parse our answer:\n\(answer)")
    }
    return 0
}
