/// The server's decision for one offered `m=` line.
public struct AnswerMedia: Equatable, Sendable {
    public var kind: MediaDescription.Kind?
    public var rawKind: String
    public var accepted: Bool
    /// The single payload type the server receives; an accepted entry without one is answered as rejected.
    public var payloadType: UInt8?
    public var rtpmap: RTPMap?
    public var fmtp: String?
    /// The server's own SDES key line, for SRTP.
    public var crypto: CryptoAttribute?
    /// `a=rtcp-fb` values for the chosen payload type (e.g. `nack pli`): the feedback the server sends.
    public var rtcpFeedback: [String] = []
    /// A retransmission (RFC 4588 `rtx`) payload type accepted alongside the chosen one, with its clock rate.
    public var retransmission: (payloadType: UInt8, clockRate: Int)?
    /// The answer's direction: `recvonly` (the server only receives), `sendrecv`, `sendonly` or `inactive`.
    public var direction = "recvonly"
    /// The SSRC the server sends from on this line, with its CNAME (`a=ssrc:<n> cname:<c>`), when it sends.
    public var sendSSRC: (ssrc: UInt32, cname: String)?

    public static func == (a: Self, b: Self) -> Bool {
        a.kind == b.kind && a.rawKind == b.rawKind && a.accepted == b.accepted && a.payloadType == b.payloadType
            && a.rtpmap == b.rtpmap && a.fmtp == b.fmtp && a.crypto == b.crypto && a.rtcpFeedback == b.rtcpFeedback
            && a.retransmission?.payloadType == b.retransmission?.payloadType
            && a.retransmission?.clockRate == b.retransmission?.clockRate && a.direction == b.direction
            && a.sendSSRC?.ssrc == b.sendSSRC?.ssrc && a.sendSSRC?.cname == b.sendSSRC?.cname
    }

    public init(
        kind: MediaDescription.Kind?, rawKind: String, accepted: Bool, payloadType: UInt8? = nil,
        rtpmap: RTPMap? = nil, fmtp: String? = nil, crypto: CryptoAttribute? = nil
    ) {
        self.kind = kind
        self.rawKind = rawKind
        self.accepted = accepted
        self.payloadType = payloadType
        self.rtpmap = rtpmap
        self.fmtp = fmtp
        self.crypto = crypto
    }

    /// A refusal of `offered`.
    public static func rejected(_ offered: MediaDescription) -> AnswerMedia {
        AnswerMedia(kind: offered.kind, rawKind: offered.rawKind, accepted: false)
    }
}

/// Writes the SDP answer (RFC 3264 §6) with CRLF line endings.
///
/// One `m=` line per offered one, in the same order, with the offered media type and protocol
/// (an answer may not change them). `media[i]` answers `offer.media[i]`; missing entries are
/// rejections. Accepted lines carry `port`, the chosen payload type with its rtpmap/fmtp,
/// `a=rtcp-mux`, the direction (`a=recvonly` when the server only receives), the server's `a=ssrc` when it
/// sends, the crypto line when given, and the offered `a=mid`. Rejected lines have port 0 and repeat the offered formats, as §6 requires.
/// An address containing `:` is written as `IP6`, anything else as `IP4`.
public func makeAnswer(
    offer: SessionDescription, address: String, port: Int, media: [AnswerMedia],
    sessionId: UInt64
) -> String {
    let addressType = address.contains(":") ? "IP6" : "IP4"
    var lines = [
        "v=0",
        "o=- \(sessionId) 1 IN \(addressType) \(address)",
        "s=Cohost",
        "c=IN \(addressType) \(address)",
        "t=0 0",
    ]
    for (index, offered) in offer.media.enumerated() {
        let answer = index < media.count ? media[index] : nil
        guard let answer, answer.accepted, let pt = answer.payloadType else {
            lines.append("m=\(offered.rawKind) 0 \(offered.proto) \(offered.formats.joined(separator: " "))")
            continue
        }
        let rtx = answer.retransmission
        lines.append("m=\(offered.rawKind) \(port) \(offered.proto) \(pt)" + (rtx.map { " \($0.payloadType)" } ?? ""))
        if let mid = offered.mid { lines.append("a=mid:\(mid)") }
        if let rtpmap = answer.rtpmap { lines.append("a=rtpmap:\(pt) \(rtpmap.attributeValue)") }
        if let fmtp = answer.fmtp { lines.append("a=fmtp:\(pt) \(fmtp)") }
        for feedback in answer.rtcpFeedback { lines.append("a=rtcp-fb:\(pt) \(feedback)") }
        if let rtx {
            lines.append("a=rtpmap:\(rtx.payloadType) rtx/\(rtx.clockRate)")
            lines.append("a=fmtp:\(rtx.payloadType) apt=\(pt)")
        }
        lines.append("a=rtcp-mux")
        lines.append("a=\(answer.direction)")
        if let send = answer.sendSSRC { lines.append("a=ssrc:\(send.ssrc) cname:\(send.cname)") }
        if let crypto = answer.crypto { lines.append("a=crypto:\(crypto.attributeValue)") }
    }
    return lines.map { $0 + "\r\n" }.joined()
}
