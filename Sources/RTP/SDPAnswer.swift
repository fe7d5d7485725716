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
    /// The offer's id of the MID header extension (RFC 9143 §15.1), echoed on a WebRTC line.
    public var midExtension: UInt8?
    /// Further payload types the server may send on this line (a forwarding slot carries each sender's codec as
    /// it is), after the chosen one, with their rtpmap and fmtp; they get the same `a=rtcp-fb`.
    public var moreFormats: [(payloadType: UInt8, rtpmap: RTPMap, fmtp: String?)] = []
    /// The `a=msid` stream id of what the server sends on this line, when not the participant's shared one (each
    /// forwarding slot is a stream of its own).
    public var msidStream: String?
    /// The simulcast streams received on this line (answered `a=rid:<id> recv` and `a=simulcast:recv …`), with the
    /// offer's ids of the header extensions naming them (RFC 8852).
    public var receivedRids: [String] = []
    public var ridExtension: UInt8?
    public var repairedRidExtension: UInt8?

    public static func == (a: Self, b: Self) -> Bool {
        a.kind == b.kind && a.rawKind == b.rawKind && a.accepted == b.accepted && a.payloadType == b.payloadType
            && a.rtpmap == b.rtpmap && a.fmtp == b.fmtp && a.crypto == b.crypto && a.rtcpFeedback == b.rtcpFeedback
            && a.retransmission?.payloadType == b.retransmission?.payloadType
            && a.retransmission?.clockRate == b.retransmission?.clockRate && a.direction == b.direction
            && a.sendSSRC?.ssrc == b.sendSSRC?.ssrc && a.sendSSRC?.cname == b.sendSSRC?.cname
            && a.midExtension == b.midExtension && a.msidStream == b.msidStream && a.receivedRids == b.receivedRids
            && a.ridExtension == b.ridExtension && a.repairedRidExtension == b.repairedRidExtension
            && a.moreFormats.map(\.payloadType) == b.moreFormats.map(\.payloadType)
            && a.moreFormats.map(\.rtpmap) == b.moreFormats.map(\.rtpmap)
            && a.moreFormats.map(\.fmtp) == b.moreFormats.map(\.fmtp)
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

/// The transport of a WebRTC answer (RFC 8829 §5.3, RFC 8839, RFC 8842): ICE-lite credentials, host candidates,
/// the DTLS role and fingerprint, shared by every accepted line (one BUNDLE group).
public struct AnswerTransport: Equatable, Sendable {
    public var iceUfrag: String
    public var icePassword: String
    /// `sha-256 AB:CD:…`
    public var fingerprint: String
    /// `passive` (Cohost is the DTLS server) or `active`.
    public var setup: String
    /// Host candidates: address and port, in order of preference.
    public var candidates: [(address: String, port: Int)]
    /// The ICE-TCP port (RFC 6544): a passive TCP candidate at each address; nil for none.
    public var tcpPort: Int?

    public init(
        iceUfrag: String, icePassword: String, fingerprint: String, setup: String,
        candidates: [(address: String, port: Int)], tcpPort: Int? = nil
    ) {
        self.iceUfrag = iceUfrag
        self.icePassword = icePassword
        self.fingerprint = fingerprint
        self.setup = setup
        self.candidates = candidates
        self.tcpPort = tcpPort
    }

    public static func == (a: Self, b: Self) -> Bool {
        a.iceUfrag == b.iceUfrag && a.icePassword == b.icePassword && a.fingerprint == b.fingerprint
            && a.setup == b.setup && a.candidates.map(\.address) == b.candidates.map(\.address)
            && a.candidates.map(\.port) == b.candidates.map(\.port) && a.tcpPort == b.tcpPort
    }

    /// `a=candidate` values: one UDP host candidate per address, component 1 (rtcp-mux), priority by RFC 8445
    /// §5.1.2.1 with the local preference falling by address; then the passive TCP ones (RFC 6544 §4.2: direction
    /// preference 4 of passive host candidates), below every UDP one, so TCP carries media only when UDP fails.
    public var candidateLines: [String] {
        let udp = candidates.enumerated().map { index, candidate in
            let priority = (126 << 24) | ((65_535 - index) << 8) | 255
            return "candidate:\(index + 1) 1 udp \(priority) \(candidate.address) \(candidate.port) typ host"
        }
        guard let tcpPort else { return udp }
        let tcp = candidates.enumerated().map { index, candidate in
            let priority = (126 << 24) | (((4 << 13) | (8_191 - index)) << 8) | 255
            return "candidate:\(candidates.count + index + 1) 1 tcp \(priority) \(candidate.address) \(tcpPort)"
                + " typ host tcptype passive"
        }
        return udp + tcp
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
/// With `transport` (a WebRTC offer): `a=ice-lite` and one `a=group:BUNDLE` of the accepted lines at the session
/// level; on each accepted line the ICE credentials, candidates, fingerprint, setup role, `a=rtcp-rsize`, the MID
/// header extension and `a=msid` (one stream per participant, so a browser plays audio and video in sync).
public func makeAnswer(
    offer: SessionDescription, address: String, port: Int, media: [AnswerMedia],
    sessionId: UInt64, transport: AnswerTransport? = nil
) -> String {
    let addressType = address.contains(":") ? "IP6" : "IP4"
    var lines = [
        "v=0",
        "o=- \(sessionId) 1 IN \(addressType) \(address)",
        "s=Cohost",
        "c=IN \(addressType) \(address)",
        "t=0 0",
    ]
    if transport != nil {
        lines.append("a=ice-lite")
        let bundled = offer.media.indices.compactMap { index -> String? in
            guard index < media.count, media[index].accepted, media[index].payloadType != nil else { return nil }
            return offer.media[index].mid
        }
        if !bundled.isEmpty { lines.append("a=group:BUNDLE " + bundled.joined(separator: " ")) }
        lines.append("a=msid-semantic: WMS cohost-\(sessionId)")
    }
    for (index, offered) in offer.media.enumerated() {
        let answer = index < media.count ? media[index] : nil
        guard let answer, answer.accepted, let pt = answer.payloadType else {
            lines.append("m=\(offered.rawKind) 0 \(offered.proto) \(offered.formats.joined(separator: " "))")
            continue
        }
        let rtx = answer.retransmission
        let more = answer.moreFormats.map { " \($0.payloadType)" }.joined()
        lines.append(
            "m=\(offered.rawKind) \(port) \(offered.proto) \(pt)" + more + (rtx.map { " \($0.payloadType)" } ?? ""))
        if let mid = offered.mid { lines.append("a=mid:\(mid)") }
        if let transport {
            lines.append("a=ice-ufrag:\(transport.iceUfrag)")
            lines.append("a=ice-pwd:\(transport.icePassword)")
            lines.append("a=fingerprint:\(transport.fingerprint)")
            lines.append("a=setup:\(transport.setup)")
            for candidate in transport.candidateLines { lines.append("a=\(candidate)") }
            lines.append("a=end-of-candidates")
            if let id = answer.midExtension { lines.append("a=extmap:\(id) \(midExtensionURI)") }
        }
        if let id = answer.ridExtension { lines.append("a=extmap:\(id) \(ridExtensionURI)") }
        if let id = answer.repairedRidExtension { lines.append("a=extmap:\(id) \(repairedRidExtensionURI)") }
        if let rtpmap = answer.rtpmap { lines.append("a=rtpmap:\(pt) \(rtpmap.attributeValue)") }
        if let fmtp = answer.fmtp { lines.append("a=fmtp:\(pt) \(fmtp)") }
        for feedback in answer.rtcpFeedback { lines.append("a=rtcp-fb:\(pt) \(feedback)") }
        for format in answer.moreFormats {
            lines.append("a=rtpmap:\(format.payloadType) \(format.rtpmap.attributeValue)")
            if let fmtp = format.fmtp { lines.append("a=fmtp:\(format.payloadType) \(fmtp)") }
            for feedback in answer.rtcpFeedback { lines.append("a=rtcp-fb:\(format.payloadType) \(feedback)") }
        }
        if let rtx {
            lines.append("a=rtpmap:\(rtx.payloadType) rtx/\(rtx.clockRate)")
            lines.append("a=fmtp:\(rtx.payloadType) apt=\(pt)")
        }
        lines.append("a=rtcp-mux")
        if transport != nil { lines.append("a=rtcp-rsize") }
        lines.append("a=\(answer.direction)")
        if !answer.receivedRids.isEmpty {
            for rid in answer.receivedRids { lines.append("a=rid:\(rid) recv") }
            lines.append("a=simulcast:recv " + answer.receivedRids.joined(separator: ";"))
        }
        if let send = answer.sendSSRC {
            if transport != nil {
                lines.append(
                    answer.msidStream.map { "a=msid:\($0) \($0)-\(offered.rawKind)" }
                        ?? "a=msid:cohost-\(sessionId) \(offered.rawKind)")
            }
            lines.append("a=ssrc:\(send.ssrc) cname:\(send.cname)")
        }
        if let crypto = answer.crypto { lines.append("a=crypto:\(crypto.attributeValue)") }
    }
    return lines.map { $0 + "\r\n" }.joined()
}

/// The RTP header extension carrying a packet's `a=mid` (RFC 9143 §15.1).
public let midExtensionURI = "urn:ietf:params:rtp-hdrext:sdes:mid"
/// The header extensions naming a simulcast stream and the stream a retransmission repairs (RFC 8852 §3).
public let ridExtensionURI = "urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id"
public let repairedRidExtensionURI = "urn:ietf:params:rtp-hdrext:sdes:repaired-rtp-stream-id"
