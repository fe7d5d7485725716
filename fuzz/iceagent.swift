// The ICE-lite agent on hostile datagrams: any bytes from any source, as a check or as an answer to a consent check,
// never crash it, never nominate an address without a check signed with its password, and never renew consent
// without an answer signed with the peer's.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var agent = ICELiteAgent<Int>(
        localUfrag: "evtj", localPassword: "VOkJxbRl1RmTxUk/WvJxBt", remoteUfrag: "h6vY",
        remotePassword: "Qe8Rj1s9Zr0cA5mVtK2wLp7d", nowMs: 0)
    let source = Int(size % 3)
    let outcome = agent.handle(bytes, from: source, nowMs: 10) { _ in [0, 1, 0, 0, 0, 0, 0, 0] }
    switch outcome {
    case .respond(let answer):
        let valid = (try? STUNMessage(bytes: bytes))?.hasValidIntegrity(
            in: bytes, key: Array("VOkJxbRl1RmTxUk/WvJxBt".utf8))
        require(valid == true, "answered a check that is not signed with our password")
        require(agent.nominated == source, "a valid check did not nominate its source")
        require((try? STUNMessage(bytes: answer)) != nil, "an answer that does not parse")
    case .consented:
        require(false, "consent from an answer to a check never sent")
    case .ignore:
        require(agent.nominated == nil, "an ignored datagram nominated an address")
    }
    // After a nominating check, a consent check goes out; the input as its answer renews consent only when valid.
    if agent.nominated != nil, let check = agent.consentCheck(nowMs: 20) {
        var answer = bytes
        if answer.count >= 20, let request = try? STUNMessage(bytes: check.bytes) {
            answer.replaceSubrange(8..<20, with: request.transactionID)
        }
        if agent.handle(answer, from: check.to, nowMs: 30, mapped: { _ in [] }) == .consented {
            let message = try? STUNMessage(bytes: answer)
            require(
                message?.hasValidIntegrity(in: answer, key: Array("Qe8Rj1s9Zr0cA5mVtK2wLp7d".utf8)) == true,
                "consent from an answer not signed with the peer's password")
            require(agent.lastConsentMs == 30, "consent not renewed")
        }
    }
    return 0
}
