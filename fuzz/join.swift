import RTP

/// The join negotiator on any offer text: no crash, and an offer it accepts gets an answer our own SDP parser reads,
/// with streams on distinct SSRCs.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJoin(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard
        let negotiation = try? JoinNegotiator.negotiate(
            offer: text, address: "127.0.0.1", port: 5004, sessionID: 1, audioOnly: size % 2 == 1)
    else { return 0 }
    require(
        (try? SessionDescription.parse(negotiation.answer)) != nil, "cannot parse our answer:\n\(negotiation.answer)")
    if let audio = negotiation.audio, let video = negotiation.video {
        require(audio.ssrc != video.ssrc, "audio and video accepted on one SSRC")
    }
    return 0
}
