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

    static func == (a: Self, b: Self) -> Bool {
        a.kind == b.kind && a.ssrc == b.ssrc && a.payloadType == b.payloadType && a.codec == b.codec
            && a.srtp?.profile == b.srtp?.profile && a.srtp?.key == b.srtp?.key
    }
}

/// The outcome of reading an offer: what Cohost will receive, and the answer text.
struct Negotiation: Sendable {
    var audio: NegotiatedStream?
    var video: NegotiatedStream?
    var answer: String
}

/// Turns an SDP offer into accepted streams and an answer (design.md §5).
///
/// Codecs Cohost decodes: Opus/48000 for audio and VP8/90000 for video. Anything else is
/// answered with port 0; an offer with nothing acceptable is 415 `unsupported_media`.
enum JoinNegotiator {
    static let maxOfferBytes = 16 * 1024

    static func negotiate(offer text: String, address: String, port: Int, sessionID: UInt64,
                          audioOnly: Bool) throws(RoomError) -> Negotiation {
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
            var answer = AnswerMedia(kind: media.kind, rawKind: media.rawKind, accepted: false,
                                     payloadType: nil, rtpmap: nil, fmtp: nil, crypto: nil)
            let wanted: (name: String, clock: Int)?
            switch media.kind {
            case .audio? where audio == nil: wanted = ("opus", 48_000)
            case .video? where video == nil && !audioOnly: wanted = ("vp8", 90_000)
            default: wanted = nil
            }
            if let wanted, media.port != 0,
               let pt = media.payloadTypes.first(where: { pt in
                   guard let map = media.rtpmaps[pt] else { return false }
                   return map.encodingName.lowercased() == wanted.name && map.clockRate == wanted.clock
               }), let map = media.rtpmaps[pt] {
                guard let ssrc = media.ssrcs.first else {
                    throw .badRequest("ssrc_missing", "m=\(media.rawKind) needs an a=ssrc line: Cohost demultiplexes by SSRC")
                }
                let secure = media.proto.hasPrefix("RTP/SAVP")
                var srtp: (SRTPProfile, [UInt8])?
                if secure {
                    guard let crypto = media.cryptos.first(where: { SRTPProfile(rawValue: $0.suite) != nil }),
                          let profile = SRTPProfile(rawValue: crypto.suite) else {
                        throw .badRequest("invalid_sdp", "m=\(media.rawKind) is \(media.proto) but offers no supported a=crypto suite (\(SRTPProfile.allCases.map(\.rawValue).joined(separator: ", ")))")
                    }
                    do { srtp = (profile, try SDES.parseInlineKey(crypto.keyParams, profile: profile)) } catch {
                        throw .badRequest("invalid_sdp", "a=crypto key: \(error)")
                    }
                    answer.crypto = CryptoAttribute(tag: crypto.tag, suite: crypto.suite,
                                                    keyParams: SDES.inlineKey(SDES.randomKey(profile: profile)))
                }
                let stream = NegotiatedStream(kind: media.kind == .audio ? .audio : .video, ssrc: ssrc, payloadType: pt,
                                              clockRate: map.clockRate, codec: map.encodingName, srtp: srtp)
                if media.kind == .audio { audio = stream } else { video = stream }
                answer.accepted = true
                answer.payloadType = pt
                answer.rtpmap = map
                answer.fmtp = media.fmtps[pt]
            }
            answers.append(answer)
        }
        guard audio != nil || video != nil else {
            throw .init(status: 415, code: "unsupported_media",
                        message: audioOnly ? "the offer has no Opus/48000 audio (this room is audio-only)"
                                           : "the offer has no codec Cohost decodes (Opus/48000 audio, VP8/90000 video)")
        }
        if let a = audio, let v = video, a.ssrc == v.ssrc {
            throw .badRequest("invalid_sdp", "audio and video use the same SSRC \(a.ssrc)")
        }
        let answer = makeAnswer(offer: offer, address: address, port: port, media: answers, sessionId: sessionID)
        return Negotiation(audio: audio, video: video, answer: answer)
    }
}
