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

    static func == (a: Self, b: Self) -> Bool {
        a.kind == b.kind && a.ssrc == b.ssrc && a.payloadType == b.payloadType && a.codec == b.codec
            && a.srtp?.profile == b.srtp?.profile && a.srtp?.key == b.srtp?.key
    }
}

/// The RTCP message that asks a sender for a keyframe.
enum KeyframeRequestKind: Sendable, Equatable { case pli, fir }

/// The outcome of reading an offer: what Cohost will receive, and the answer text.
struct Negotiation: Sendable {
    var audio: NegotiatedStream?
    var video: NegotiatedStream?
    var answer: String
}

/// Turns an SDP offer into accepted streams and an answer (protocol/sdp.md).
///
/// Codecs Cohost decodes: Opus/48000 for audio, VP8/90000 or H.264/90000 for video (VP8 is
/// preferred when both are offered: it is cheaper to decode). Anything else is answered with
/// port 0; an offer with nothing acceptable is 415 `unsupported_media`.
enum JoinNegotiator {
    static let maxOfferBytes = 16 * 1024

    static func negotiate(
        offer text: String, address: String, port: Int, sessionID: UInt64,
        audioOnly: Bool
    ) throws(RoomError) -> Negotiation {
        guard text.utf8.count <= maxOfferBytes else {
            throw .init(status: 413, code: "body_too_large", message: "SDP offer larger than \(maxOfferBytes) bytes")
        }
        let offer: SessionDescription
        do { offer = try SessionDescription.parse(text) } catch {
            throw .badRequest("invalid_sdp", "malformed SDP offer: \(error)")
        }
        var audio: NegotiatedStream?
        var video: NegotiatedStream?
        var answers: [AnswerMedia] = []
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
            if media.port != 0, let pt = choice, let map = media.rtpmaps[pt] {
                let repairSSRCs = Set(media.retransmissionSSRCs.values)
                guard let ssrc = media.ssrcs.first(where: { !repairSSRCs.contains($0) }) else {
                    throw .badRequest(
                        "ssrc_missing", "m=\(media.rawKind) needs an a=ssrc line: Cohost demultiplexes by SSRC")
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
                var stream = NegotiatedStream(
                    kind: media.kind == .audio ? .audio : .video, ssrc: ssrc, payloadType: pt,
                    clockRate: map.clockRate, codec: map.encodingName, srtp: srtp,
                    serverKey: serverKey)
                answer.accepted = true
                answer.payloadType = pt
                answer.rtpmap = map
                answer.fmtp = media.fmtps[pt]
                if media.kind == .video {
                    let offered = media.rtcpFeedback[pt] ?? []
                    // Cohost sends NACK, PLI and FIR; an offer silent about rtcp-fb (plain RTP/AVP senders such as
                    // ffmpeg) is told all three, which such senders ignore harmlessly.
                    answer.rtcpFeedback =
                        offered.isEmpty ? supportedFeedback : supportedFeedback.filter(offered.contains)
                    if offered.contains("ccm fir") && !offered.contains("nack pli") { stream.keyframeRequest = .fir }
                    if let repair = media.retransmissionSSRCs[ssrc],
                        let rtxPT = retransmissionPayloadType(in: media, for: pt, clockRate: map.clockRate)
                    {
                        stream.retransmission = (repair, rtxPT)
                        answer.retransmission = (rtxPT, map.clockRate)
                    }
                }
                if media.kind == .audio { audio = stream } else { video = stream }
            }
            answers.append(answer)
        }
        guard audio != nil || video != nil else {
            throw .init(
                status: 415, code: "unsupported_media",
                message: audioOnly
                    ? "the offer has no Opus/48000 audio (this room is audio-only)"
                    : "the offer has no codec Cohost decodes (Opus/48000 audio, VP8/90000 or H264/90000 video)")
        }
        if let a = audio, let v = video, a.ssrc == v.ssrc {
            throw .badRequest("invalid_sdp", "audio and video use the same SSRC \(a.ssrc)")
        }
        if let v = video, let rtx = v.retransmission, rtx.ssrc == v.ssrc || rtx.ssrc == audio?.ssrc {
            throw .badRequest("invalid_sdp", "the retransmission SSRC \(rtx.ssrc) is also a media SSRC")
        }
        let answer = makeAnswer(offer: offer, address: address, port: port, media: answers, sessionId: sessionID)
        return Negotiation(audio: audio, video: video, answer: answer)
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
