import RTP
import SRTP

/// One inbound stream accepted from an offer.
struct NegotiatedStream: Sendable, Equatable {
    enum Kind: Sendable { case audio, video }
    var kind: Kind
    var ssrc: UInt32
    var payloadType: UInt8
    var clockRate: Int
    var codec: String
    /// SRTP master key and salt from the offer's `a=crypto`, when the m= line is RTP/SAVP(F).
    var srtp: (profile: SRTPProfile, key: [UInt8])?
    /// The key of the answer's `a=crypto`, protecting the RTCP feedback Cohost sends back.
    var serverKey: [UInt8]?
    /// How this sender wants keyframes asked for: FIR only when its offer lists `ccm fir` but not `nack pli`.
    var keyframeRequest: KeyframeRequestKind = .pli
    /// RFC 4588 retransmissions on their own SSRC and payload type, when the offer has them.
    var retransmission: (ssrc: UInt32, payloadType: UInt8)?
    /// A WebRTC line that listed no `a=ssrc`: `ssrc` is a stand-in that never appears on the wire, and the real
    /// one is learnt from the first packet carrying this `a=mid` in its MID header extension.
    var learnFromMID: String?

    static func == (a: Self, b: Self) -> Bool {
        a.kind == b.kind && a.ssrc == b.ssrc && a.payloadType == b.payloadType && a.codec == b.codec
            && a.srtp?.profile == b.srtp?.profile && a.srtp?.key == b.srtp?.key
    }
}

/// The RTCP message that asks a sender for a keyframe.
enum KeyframeRequestKind: Sendable, Equatable { case pli, fir }

/// What Cohost sends a participant on one `m=` line (the return path): the room's mix-minus on an audio line,
/// the room view on a video line.
struct ReturnOffer: Sendable {
    var kind: NegotiatedStream.Kind
    /// The answer's payload type and codec for this line (the same one Cohost receives on, when it does).
    var payloadType: UInt8
    var codec: String
    /// Audio: 2 when the offer asked for stereo (`stereo=1`), else 1.
    var channels: Int
    /// Cohost's SSRC on this line, announced in the answer.
    var ssrc: UInt32
    /// The answer's SDES key, protecting what Cohost sends on this line.
    var srtp: (profile: SRTPProfile, key: [UInt8])?
    /// The participant's own SSRC on a line it only receives on (`a=ssrc` of a `recvonly` line): the RTCP it
    /// sends about what it receives comes from it. nil on lines it also sends on (that SSRC is the stream's).
    var receiverSSRC: UInt32?
    /// SRTP key of the offer for that receiver-only SSRC's SRTCP.
    var receiverSRTP: (profile: SRTPProfile, key: [UInt8])?
    /// A WebRTC participant's keys, known once its DTLS handshake is done: nothing is sent before.
    var dtlsKeys: TransportKeys?
}

/// The outcome of reading an offer: what Cohost will receive and send back, and the answer text.
struct Negotiation: Sendable {
    var audio: NegotiatedStream?
    var video: NegotiatedStream?
    var returnAudio: ReturnOffer?
    var returnVideo: ReturnOffer?
    var answer: String
    /// The ICE and DTLS parameters of a WebRTC offer; nil for plain RTP and SDES-SRTP.
    var webRTC: WebRTCParameters?
}

/// What a WebRTC participant's transport needs from the offer and the answer.
struct WebRTCParameters: Sendable, Equatable {
    var localUfrag: String
    var localPassword: String
    var remoteUfrag: String
    var remotePassword: String
    /// The offer's `a=fingerprint`: the hash's SDP name and the digest.
    var fingerprint: MediaDescription.Fingerprint
    /// Cohost's DTLS role: server (`a=setup:passive` in the answer) unless the offer is `passive`.
    var dtlsServer: Bool
    /// The offer's MID header extension id and which `a=mid` is which kind: SSRCs the offer does not list are
    /// learnt from it.
    var midExtension: UInt8?
    var midKinds: [String: NegotiatedStream.Kind]
}

/// Cohost's side of every WebRTC answer: its certificate's fingerprint and where it listens.
public struct WebRTCIdentity: Sendable {
    /// `sha-256 AB:CD:…`
    public var fingerprint: String
    /// The host candidates' addresses (the public IPs), tried in this order.
    public var addresses: [String]

    public init(fingerprint: String, addresses: [String]) {
        self.fingerprint = fingerprint
        self.addresses = addresses
    }
}

/// Turns an SDP offer into accepted streams and an answer (protocol/sdp.md).
///
/// Codecs Cohost decodes: Opus/48000 for audio, VP8/90000 or H.264/90000 for video (VP8 is
/// preferred when both are offered: it is cheaper to decode). Anything else is answered with
/// port 0; an offer with nothing acceptable is 415 `unsupported_media`. A line the participant receives on
/// (`sendrecv`, the default, or `recvonly`) gets the return path: `sendsRoomView` false answers video lines as
/// if they were `sendonly`. `ssrcInUse` says which SSRCs Cohost may not pick for itself.
enum JoinNegotiator {
    static let maxOfferBytes = 16 * 1024

    static func negotiate(
        offer text: String, address: String, port: Int, sessionID: UInt64,
        audioOnly: Bool, sendsRoomView: Bool = true, webRTC identity: WebRTCIdentity? = nil,
        ssrcInUse: (UInt32) -> Bool = { _ in false }
    ) throws(RoomError) -> Negotiation {
        guard text.utf8.count <= maxOfferBytes else {
            throw RoomError(.tooLarge, "body_too_large", "SDP offer larger than \(maxOfferBytes) bytes")
        }
        let offer: SessionDescription
        do { offer = try SessionDescription.parse(text) } catch {
            throw .badRequest("invalid_sdp", "malformed SDP offer: \(error)")
        }
        let webRTC = try webRTCParameters(of: offer, identity: identity)
        var audio: NegotiatedStream?
        var video: NegotiatedStream?
        var returnAudio: ReturnOffer?
        var returnVideo: ReturnOffer?
        var answers: [AnswerMedia] = []
        var taken = Set(offer.media.flatMap(\.ssrcs))
        for media in offer.media {
            var answer = AnswerMedia(
                kind: media.kind, rawKind: media.rawKind, accepted: false,
                payloadType: nil, rtpmap: nil, fmtp: nil, crypto: nil)
            let wanted: [(name: String, clock: Int)]
            switch media.kind {
            case .audio? where audio == nil: wanted = [("opus", 48_000)]
            case .video? where video == nil && !audioOnly: wanted = [("vp8", 90_000), ("h264", 90_000)]
            default: wanted = []
            }
            let choice = wanted.lazy.compactMap { codec in
                media.payloadTypes.first { pt in
                    guard let map = media.rtpmaps[pt], map.encodingName.lowercased() == codec.name,
                        map.clockRate == codec.clock
                    else { return false }
                    // H.264 in packetization-mode 2 (interleaved) is not supported.
                    return codec.name != "h264" || !(media.fmtps[pt] ?? "").contains("packetization-mode=2")
                }
            }.first
            let direction = media.direction ?? "sendrecv"
            let participantSends = direction == "sendrecv" || direction == "sendonly"
            let participantReceives =
                (direction == "sendrecv" || direction == "recvonly") && (media.kind == .audio || sendsRoomView)
            if media.port != 0, let pt = choice, let map = media.rtpmaps[pt], participantSends || participantReceives {
                let repairSSRCs = Set(media.retransmissionSSRCs.values)
                var firstSSRC = media.ssrcs.first(where: { !repairSSRCs.contains($0) })
                var learnFromMID: String?
                // A WebRTC sender that lists no SSRC tags its packets with the line's MID (RFC 9143 §15.1).
                if participantSends && firstSSRC == nil && media.rids.isEmpty, let mid = media.mid,
                    webRTC?.midExtension != nil, media.extensions[midExtensionURI] != nil
                {
                    var standIn = UInt32.random(in: 1...UInt32.max)
                    while taken.contains(standIn) || ssrcInUse(standIn) { standIn = UInt32.random(in: 1...UInt32.max) }
                    taken.insert(standIn)
                    firstSSRC = standIn
                    learnFromMID = mid
                }
                if participantSends && firstSSRC == nil {
                    throw .badRequest(
                        "ssrc_missing",
                        media.rids.isEmpty
                            ? "m=\(media.rawKind) needs an a=ssrc line: Cohost demultiplexes by SSRC"
                            : "m=\(media.rawKind) offers simulcast or RIDs (a=rid), which Cohost does not receive: send one encoding, with a=ssrc"
                    )
                }
                let secure = media.proto.hasPrefix("RTP/SAVP")
                var srtp: (SRTPProfile, [UInt8])?
                var serverKey: [UInt8]?
                if secure {
                    guard let crypto = media.cryptos.first(where: { SRTPProfile(rawValue: $0.suite) != nil }),
                        let profile = SRTPProfile(rawValue: crypto.suite)
                    else {
                        throw .badRequest(
                            "invalid_sdp",
                            "m=\(media.rawKind) is \(media.proto) but offers no supported a=crypto suite (\(SRTPProfile.allCases.map(\.rawValue).joined(separator: ", ")))"
                        )
                    }
                    do { srtp = (profile, try SDES.parseInlineKey(crypto.keyParams, profile: profile)) } catch {
                        throw .badRequest("invalid_sdp", "a=crypto key: \(error)")
                    }
                    let key = SDES.randomKey(profile: profile)
                    serverKey = key
                    answer.crypto = CryptoAttribute(
                        tag: crypto.tag, suite: crypto.suite, keyParams: SDES.inlineKey(key))
                }
                let kind: NegotiatedStream.Kind = media.kind == .audio ? .audio : .video
                answer.accepted = true
                answer.payloadType = pt
                answer.rtpmap = map
                answer.fmtp = media.fmtps[pt]
                answer.direction =
                    participantSends ? (participantReceives ? "sendrecv" : "recvonly") : "sendonly"
                if webRTC != nil { answer.midExtension = media.extensions[midExtensionURI] }
                if participantSends, let ssrc = firstSSRC {
                    var stream = NegotiatedStream(
                        kind: kind, ssrc: ssrc, payloadType: pt,
                        clockRate: map.clockRate, codec: map.encodingName, srtp: srtp,
                        serverKey: serverKey)
                    stream.learnFromMID = learnFromMID
                    if media.kind == .video {
                        let offered = media.rtcpFeedback[pt] ?? []
                        if offered.contains("ccm fir") && !offered.contains("nack pli") {
                            stream.keyframeRequest = .fir
                        }
                        if let repair = media.retransmissionSSRCs[ssrc],
                            let rtxPT = retransmissionPayloadType(in: media, for: pt, clockRate: map.clockRate)
                        {
                            stream.retransmission = (repair, rtxPT)
                            answer.retransmission = (rtxPT, map.clockRate)
                        }
                    }
                    if media.kind == .audio { audio = stream } else { video = stream }
                }
                if media.kind == .video {
                    let offered = media.rtcpFeedback[pt] ?? []
                    // Cohost sends NACK, PLI and FIR and answers them; an offer silent about rtcp-fb (plain RTP/AVP
                    // senders such as ffmpeg) is told all three, which such senders ignore harmlessly.
                    answer.rtcpFeedback =
                        offered.isEmpty ? supportedFeedback : supportedFeedback.filter(offered.contains)
                    // REMB both ways: a receiver of the room view caps its bitrate with it, and Cohost sends it to a
                    // WebRTC sender (what makes a browser adapt).
                    if (participantReceives || webRTC != nil) && offered.contains("goog-remb") {
                        answer.rtcpFeedback.append("goog-remb")
                    }
                }
                if participantReceives {
                    var ours = UInt32.random(in: 1...UInt32.max)
                    while taken.contains(ours) || ssrcInUse(ours) { ours = UInt32.random(in: 1...UInt32.max) }
                    taken.insert(ours)
                    let stereo = (media.fmtps[pt] ?? "").split(separator: ";").contains {
                        $0.filter { $0 != " " } == "stereo=1"
                    }
                    let back = ReturnOffer(
                        kind: kind, payloadType: pt, codec: map.encodingName,
                        channels: kind == .audio && stereo ? 2 : 1, ssrc: ours,
                        srtp: srtp.flatMap { offered in serverKey.map { (offered.0, $0) } },
                        receiverSSRC: participantSends ? nil : firstSSRC,
                        receiverSRTP: participantSends ? nil : srtp)
                    answer.sendSSRC = (ours, "cohost-\(sessionID)")
                    if kind == .audio { returnAudio = back } else { returnVideo = back }
                }
            } else if media.port != 0, choice != nil, direction == "inactive" {
                // Nothing either way: accepted, so the participant may turn it on in a later offer.
                answer.accepted = true
                answer.payloadType = choice
                answer.rtpmap = choice.flatMap { media.rtpmaps[$0] }
                answer.direction = "inactive"
            }
            answers.append(answer)
        }
        guard audio != nil || video != nil || returnAudio != nil || returnVideo != nil else {
            throw RoomError(
                .unsupported, "unsupported_media",
                audioOnly
                    ? "the offer has no Opus/48000 audio (this room is audio-only)"
                    : "the offer has no codec Cohost decodes (Opus/48000 audio, VP8/90000 or H264/90000 video)")
        }
        if let a = audio, let v = video, a.ssrc == v.ssrc {
            throw .badRequest("invalid_sdp", "audio and video use the same SSRC \(a.ssrc)")
        }
        if let v = video, let rtx = v.retransmission, rtx.ssrc == v.ssrc || rtx.ssrc == audio?.ssrc {
            throw .badRequest("invalid_sdp", "the retransmission SSRC \(rtx.ssrc) is also a media SSRC")
        }
        let transport = webRTC.map {
            AnswerTransport(
                iceUfrag: $0.localUfrag, icePassword: $0.localPassword, fingerprint: identity?.fingerprint ?? "",
                setup: $0.dtlsServer ? "passive" : "active",
                candidates: (identity?.addresses ?? [address]).map { ($0, port) })
        }
        let answer = makeAnswer(
            offer: offer, address: address, port: port, media: answers, sessionId: sessionID, transport: transport)
        if let receiver = (returnAudio?.receiverSSRC ?? nil), receiver == returnVideo?.receiverSSRC ?? nil {
            throw .badRequest("invalid_sdp", "two receive-only lines use the same SSRC \(receiver)")
        }
        let own = [audio?.ssrc, video?.ssrc, video?.retransmission?.ssrc]
        for receiver in [returnAudio?.receiverSSRC, returnVideo?.receiverSSRC].compactMap({ $0 })
        where own.contains(receiver) {
            throw .badRequest("invalid_sdp", "the receive-only SSRC \(receiver) is also a media SSRC")
        }
        return Negotiation(
            audio: audio, video: video, returnAudio: returnAudio, returnVideo: returnVideo, answer: answer,
            webRTC: webRTC)
    }

    /// The ICE and DTLS parameters of a WebRTC offer (an m= line in UDP/TLS/RTP/SAVPF, RFC 8843), nil for other
    /// offers. Every line must share one ICE ufrag, password and fingerprint (BUNDLE: one transport); plain RTP and
    /// WebRTC lines do not mix.
    private static func webRTCParameters(
        of offer: SessionDescription, identity: WebRTCIdentity?
    ) throws(RoomError) -> WebRTCParameters? {
        let live = offer.media.filter { $0.port != 0 }
        let secure = live.filter { $0.proto.uppercased().contains("TLS") }
        guard let first = secure.first else { return nil }
        guard identity != nil else {
            throw RoomError(
                .unsupported, "unsupported_transport",
                "m=\(first.rawKind) is \(first.proto): this server has no DTLS certificate for WebRTC")
        }
        guard secure.count == live.count else {
            throw .badRequest("invalid_sdp", "WebRTC (UDP/TLS/RTP/SAVPF) and plain RTP lines cannot be mixed")
        }
        guard first.proto.uppercased() == "UDP/TLS/RTP/SAVPF" || first.proto.uppercased() == "UDP/TLS/RTP/SAVP" else {
            throw RoomError(
                .unsupported, "unsupported_transport",
                "m=\(first.rawKind) is \(first.proto): Cohost takes WebRTC over UDP (UDP/TLS/RTP/SAVPF)")
        }
        guard let ufrag = first.iceUfrag, let password = first.icePassword else {
            throw .badRequest("invalid_sdp", "a WebRTC offer needs a=ice-ufrag and a=ice-pwd")
        }
        guard let fingerprint = first.fingerprint else {
            throw .badRequest("invalid_sdp", "a WebRTC offer needs a=fingerprint (DTLS-SRTP)")
        }
        guard ["sha-1", "sha-256", "sha-384", "sha-512"].contains(fingerprint.algorithm) else {
            throw .badRequest(
                "invalid_sdp",
                "a=fingerprint uses \(fingerprint.algorithm); Cohost checks sha-256, sha-384, sha-512 or sha-1")
        }
        for media in secure.dropFirst()
        where media.iceUfrag != ufrag || media.icePassword != password || media.fingerprint != fingerprint {
            throw .badRequest(
                "invalid_sdp", "every line must share one ICE ufrag, password and fingerprint (a=group:BUNDLE)")
        }
        let setup = first.setup ?? "actpass"
        guard setup != "holdconn" else { throw .badRequest("invalid_sdp", "a=setup:holdconn: no DTLS to set up") }
        var kinds: [String: NegotiatedStream.Kind] = [:]
        for media in secure {
            guard let mid = media.mid, let kind = media.kind else { continue }
            kinds[mid] = kind == .audio ? .audio : .video
        }
        return WebRTCParameters(
            localUfrag: randomICEString(8), localPassword: randomICEString(24), remoteUfrag: ufrag,
            remotePassword: password, fingerprint: fingerprint, dtlsServer: setup != "passive",
            midExtension: first.extensions[midExtensionURI], midKinds: kinds)
    }

    /// ice-chars (RFC 8839 §5.4) from the system's random source: 6 bits each.
    static func randomICEString(_ count: Int) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        var generator = SystemRandomNumberGenerator()
        return String((0..<count).map { _ in alphabet[Int(generator.next() & 63)] })
    }

    static let supportedFeedback = ["nack", "nack pli", "ccm fir"]

    /// The offered `rtx/<clock>` payload type whose `apt=` names `pt` (RFC 4588 §8.6).
    private static func retransmissionPayloadType(in media: MediaDescription, for pt: UInt8, clockRate: Int) -> UInt8? {
        media.payloadTypes.first { candidate in
            guard let map = media.rtpmaps[candidate], map.encodingName.lowercased() == "rtx",
                map.clockRate == clockRate,
                let fmtp = media.fmtps[candidate]
            else { return false }
            return fmtp.split(separator: ";").contains { $0.filter { $0 != " " } == "apt=\(pt)" }
        }
    }
}
