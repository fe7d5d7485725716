import Foundation
import RTP
import SRTP

extension JoinNegotiator {
    /// What one media line of the offer comes to: its line of the answer, the stream Cohost receives on it, and
    /// what Cohost sends back on it.
    struct LineOutcome {
        var answer: AnswerMedia
        var stream: NegotiatedStream?
        var back: ReturnOffer?
    }

    /// Who sends on a line, read from its direction (RFC 3264 §6.1; `sendrecv` when absent).
    struct Roles {
        var direction: String
        var participantSends: Bool
        /// Audio lines always get the mix-minus back; video lines the room view, when the room sends one.
        var participantReceives: Bool

        init(_ media: MediaDescription, sendsRoomView: Bool) {
            direction = media.direction ?? "sendrecv"
            participantSends = direction == "sendrecv" || direction == "sendonly"
            participantReceives =
                (direction == "sendrecv" || direction == "recvonly") && (media.kind == .audio || sendsRoomView)
        }
    }

    /// The offer-wide facts each line is read against, and the SSRCs taken so far (the offer's, and those Cohost
    /// picked for itself on earlier lines).
    struct Lines {
        var sessionID: UInt64
        var audioOnly: Bool
        var sendsRoomView: Bool
        var webRTC: WebRTCParameters?
        var ssrcInUse: (UInt32) -> Bool
        var taken: Set<UInt32>
        /// A viewer's offer: the programme's profile-level-id (see `JoinNegotiator.negotiate`).
        var programme: String?

        /// One line: accepted with one codec, answered `inactive`, or rejected (port 0).
        mutating func negotiate<R: RandomNumberGenerator>(
            _ media: MediaDescription, audioTaken: Bool, videoTaken: Bool, using random: inout R
        ) throws(RoomError) -> LineOutcome {
            var rejected = AnswerMedia(
                kind: media.kind, rawKind: media.rawKind, accepted: false,
                payloadType: nil, rtpmap: nil, fmtp: nil, crypto: nil)
            let choice =
                programme.map { profile in
                    media.kind == .video
                        ? (audioOnly ? nil : JoinNegotiator.programmeCodec(in: media, profile: profile))
                        : JoinNegotiator.codec(in: media, audioTaken: false, videoTaken: true, audioOnly: true)
                }
                ?? JoinNegotiator.codec(
                    in: media, audioTaken: audioTaken, videoTaken: videoTaken, audioOnly: audioOnly)
            var roles = Roles(media, sendsRoomView: sendsRoomView)
            // A viewer sends nothing, whatever its line says.
            if programme != nil { roles.participantSends = false }
            if media.port != 0, let pt = choice, let map = media.rtpmaps[pt],
                roles.participantSends || roles.participantReceives
            {
                return try accept(media, payloadType: pt, rtpmap: map, roles: roles, using: &random)
            }
            if media.port != 0, let pt = choice, roles.direction == "inactive" {
                // Nothing either way: accepted, so the participant may turn it on in a later offer.
                rejected.accepted = true
                rejected.payloadType = pt
                rejected.rtpmap = media.rtpmaps[pt]
                rejected.direction = "inactive"
            }
            return LineOutcome(answer: rejected)
        }

        mutating func accept<R: RandomNumberGenerator>(
            _ media: MediaDescription, payloadType pt: UInt8, rtpmap map: RTPMap, roles: Roles,
            using random: inout R
        ) throws(RoomError) -> LineOutcome {
            let (ssrc, learnFromMID) = try senderSSRC(media, roles: roles, using: &random)
            let keys = try JoinNegotiator.sdes(media, using: &random)
            let kind: NegotiatedStream.Kind = media.kind == .audio ? .audio : .video
            var answer = AnswerMedia(
                kind: media.kind, rawKind: media.rawKind, accepted: true, payloadType: pt, rtpmap: map,
                fmtp: media.fmtps[pt], crypto: keys?.answer)
            // The programme's pictures go as they are encoded: the answer names their own profile and level.
            if let programme, media.kind == .video {
                answer.fmtp = "level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=\(programme)"
            }
            answer.direction =
                roles.participantSends ? (roles.participantReceives ? "sendrecv" : "recvonly") : "sendonly"
            if webRTC != nil { answer.midExtension = media.extensions[midExtensionURI] }
            var outcome = LineOutcome(answer: answer)
            if roles.participantSends, let ssrc {
                var stream = NegotiatedStream(
                    kind: kind, ssrc: ssrc, payloadType: pt, clockRate: map.clockRate, codec: map.encodingName,
                    srtp: keys?.offered, serverKey: keys?.server)
                stream.learnFromMID = learnFromMID
                stream.fmtp = media.fmtps[pt]
                // Layers only where no SSRC is listed: an offer naming its SSRCs sends one stream.
                if media.kind == .video, media.ssrcs.isEmpty, let rids = JoinNegotiator.simulcastRids(media) {
                    try addLayers(rids, to: &stream, answer: &outcome.answer, media: media, pt: pt, using: &random)
                }
                if media.kind == .video {
                    let offered = media.rtcpFeedback[pt] ?? []
                    if offered.contains("ccm fir") && !offered.contains("nack pli") { stream.keyframeRequest = .fir }
                    if let repair = media.retransmissionSSRCs[ssrc],
                        let rtxPT = JoinNegotiator.retransmissionPayloadType(
                            in: media, for: pt, clockRate: map.clockRate)
                    {
                        stream.retransmission = (repair, rtxPT)
                        outcome.answer.retransmission = (rtxPT, map.clockRate)
                    }
                }
                outcome.stream = stream
            }
            if media.kind == .video {
                outcome.answer.rtcpFeedback = JoinNegotiator.videoFeedback(
                    offered: media.rtcpFeedback[pt] ?? [], receivesRoomView: roles.participantReceives,
                    webRTC: webRTC != nil)
            }
            if roles.participantReceives {
                let ours = pickSSRC(using: &random)
                let stereo = (media.fmtps[pt] ?? "").split(separator: ";").contains {
                    $0.filter { $0 != " " } == "stereo=1"
                }
                outcome.back = ReturnOffer(
                    kind: kind, payloadType: pt, codec: map.encodingName,
                    channels: kind == .audio && stereo ? 2 : 1, ssrc: ours,
                    srtp: keys.map { ($0.offered.profile, $0.server) },
                    receiverSSRC: roles.participantSends ? nil : ssrc,
                    receiverSRTP: roles.participantSends ? nil : keys?.offered)
                outcome.answer.sendSSRC = (ours, "cohost-\(sessionID)")
            }
            return outcome
        }

        /// A simulcast line's layers: a stand-in SSRC per RID (and per RID's retransmissions, when the offer has RTX
        /// and the repaired-RID extension), answered with the same RIDs received.
        private mutating func addLayers<R: RandomNumberGenerator>(
            _ rids: [String], to stream: inout NegotiatedStream, answer: inout AnswerMedia, media: MediaDescription,
            pt: UInt8, using random: inout R
        ) throws(RoomError) {
            guard let ridID = media.extensions[ridExtensionURI] else {
                throw .badRequest(
                    "invalid_sdp",
                    "m=\(media.rawKind) offers simulcast (a=rid) without the \(ridExtensionURI) header extension, which names each layer's packets"
                )
            }
            let rtxPT = JoinNegotiator.retransmissionPayloadType(in: media, for: pt, clockRate: stream.clockRate)
            let repairedID = rtxPT == nil ? nil : media.extensions[repairedRidExtensionURI]
            var layers: [SimulcastLayer] = []
            for (index, rid) in rids.enumerated() {
                let ssrc = index == 0 ? stream.ssrc : pickSSRC(using: &random)
                layers.append(
                    SimulcastLayer(rid: rid, ssrc: ssrc, repairSSRC: repairedID.map { _ in pickSSRC(using: &random) }))
            }
            stream.layers = layers
            stream.ridExtension = ridID
            stream.repairedRidExtension = repairedID
            stream.learnFromMID = nil
            stream.mid = media.mid
            stream.midExtension = media.extensions[midExtensionURI]
            if let rtxPT, let repair = layers[0].repairSSRC {
                stream.retransmission = (repair, rtxPT)
                answer.retransmission = (rtxPT, stream.clockRate)
            }
            answer.receivedRids = rids
            answer.ridExtension = ridID
            answer.repairedRidExtension = repairedID
        }

        /// The SSRC the participant sends from on this line (not its RTX one). A WebRTC sender that lists none tags
        /// its packets with the line's MID (RFC 9143 §15.1): a stand-in SSRC is picked and the real one learnt.
        private mutating func senderSSRC<R: RandomNumberGenerator>(
            _ media: MediaDescription, roles: Roles, using random: inout R
        ) throws(RoomError) -> (ssrc: UInt32?, learnFromMID: String?) {
            let repairSSRCs = Set(media.retransmissionSSRCs.values)
            let listed = media.ssrcs.first(where: { !repairSSRCs.contains($0) })
            if roles.participantSends && listed == nil && media.kind == .video
                && JoinNegotiator.simulcastRids(media) != nil
            {
                // Every layer's SSRC is learnt from its RID; this is the first layer's stand-in.
                return (pickSSRC(using: &random), nil)
            }
            if roles.participantSends && listed == nil && media.rids.isEmpty, let mid = media.mid,
                webRTC?.midExtension != nil, media.extensions[midExtensionURI] != nil
            {
                return (pickSSRC(using: &random), mid)
            }
            if roles.participantSends && listed == nil {
                throw .badRequest(
                    "ssrc_missing",
                    media.rids.isEmpty
                        ? "m=\(media.rawKind) needs an a=ssrc line: Cohost demultiplexes by SSRC"
                        : "m=\(media.rawKind) offers RIDs (a=rid) Cohost cannot receive: simulcast is received on video lines only, with RIDs sent (a=rid:<id> send)"
                )
            }
            return (listed, nil)
        }

        /// An SSRC neither the offer nor this server uses, taken from then on.
        mutating func pickSSRC<R: RandomNumberGenerator>(using random: inout R) -> UInt32 {
            var ssrc = UInt32.random(in: 1...UInt32.max, using: &random)
            while taken.contains(ssrc) || ssrcInUse(ssrc) { ssrc = UInt32.random(in: 1...UInt32.max, using: &random) }
            taken.insert(ssrc)
            return ssrc
        }
    }

    /// At most this many simulcast layers per line (libwebrtc sends up to three).
    static let maxLayers = 4

    /// The RIDs of a simulcast (or RID-tagged) send offer, in the order `a=simulcast` lists them (else the `a=rid`
    /// order), those with an `a=rid:<id> send` line only; nil when the line names none. A layer an offer names that
    /// does not fit (more than `maxLayers`) is not answered, so the sender does not send it.
    static func simulcastRids(_ media: MediaDescription) -> [String]? {
        let listed = media.simulcastSend.isEmpty ? media.sendRids : media.simulcastSend.filter(media.sendRids.contains)
        var rids: [String] = []
        for rid in listed where !rids.contains(rid) && rids.count < maxLayers && isValidRid(rid) { rids.append(rid) }
        return rids.isEmpty ? nil : rids
    }

    /// rid-id (RFC 8851 §10): letters, digits, `-` and `_`; at most 16 characters here (an RTP header extension
    /// carries it).
    static func isValidRid(_ rid: String) -> Bool {
        rid.utf8.count <= 16
            && rid.utf8.allSatisfy { c in
                (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x2D
                    || c == 0x5F
            }
    }

    /// The payload type of the codec Cohost takes on this line: Opus on the first audio line; VP8, else H.264 (not
    /// in packetization-mode 2, interleaved), on the first video line of a room that is not audio-only.
    static func codec(in media: MediaDescription, audioTaken: Bool, videoTaken: Bool, audioOnly: Bool) -> UInt8? {
        let wanted: [(name: String, clock: Int)]
        switch media.kind {
        case .audio? where !audioTaken: wanted = [("opus", 48_000)]
        case .video? where !videoTaken && !audioOnly: wanted = [("vp8", 90_000), ("h264", 90_000)]
        default: wanted = []
        }
        return wanted.lazy.compactMap { codec in
            media.payloadTypes.first { pt in
                guard let map = media.rtpmaps[pt], map.encodingName.lowercased() == codec.name,
                    map.clockRate == codec.clock
                else { return false }
                return codec.name != "h264" || !(media.fmtps[pt] ?? "").contains("packetization-mode=2")
            }
        }.first
    }

    /// The payload type of the offer's H.264 in packetization mode 1 whose profile (profile_idc) is the programme's
    /// (`profile`, a profile-level-id): a decoder of that profile takes the programme's pictures as they are.
    static func programmeCodec(in media: MediaDescription, profile: String) -> UInt8? {
        let wanted = profile.prefix(2).lowercased()
        return media.payloadTypes.first { pt in
            guard let map = media.rtpmaps[pt], map.encodingName.lowercased() == "h264", map.clockRate == 90_000 else {
                return false
            }
            let fmtp = (media.fmtps[pt] ?? "").lowercased().replacingOccurrences(of: " ", with: "")
            guard fmtp.contains("packetization-mode=1") else { return false }
            // Without a profile-level-id, the offer is constrained baseline 42.
            guard let range = fmtp.range(of: "profile-level-id=") else { return wanted == "42" }
            return fmtp[range.upperBound...].prefix(2) == wanted
        }
    }

    /// SDES keys of an RTP/SAVP(F) line: the offer's (what the participant protects with) and Cohost's own, with
    /// the answer's `a=crypto`; nil on other lines.
    static func sdes<R: RandomNumberGenerator>(
        _ media: MediaDescription, using random: inout R
    ) throws(RoomError) -> (offered: (profile: SRTPProfile, key: [UInt8]), server: [UInt8], answer: CryptoAttribute)? {
        guard media.proto.hasPrefix("RTP/SAVP") else { return nil }
        guard let crypto = media.cryptos.first(where: { SRTPProfile(rawValue: $0.suite) != nil }),
            let profile = SRTPProfile(rawValue: crypto.suite)
        else {
            throw .badRequest(
                "invalid_sdp",
                "m=\(media.rawKind) is \(media.proto) but offers no supported a=crypto suite (\(SRTPProfile.allCases.map(\.rawValue).joined(separator: ", ")))"
            )
        }
        let offered: [UInt8]
        do { offered = try SDES.parseInlineKey(crypto.keyParams, profile: profile) } catch {
            throw .badRequest("invalid_sdp", "a=crypto key: \(error)")
        }
        let server = SDES.randomKey(profile: profile, using: &random)
        return (
            (profile, offered), server,
            CryptoAttribute(tag: crypto.tag, suite: crypto.suite, keyParams: SDES.inlineKey(server))
        )
    }

    /// The feedback Cohost answers on a video line: NACK, PLI and FIR, which it sends and answers (an offer silent
    /// about rtcp-fb, as plain RTP/AVP senders such as ffmpeg are, is told all three, which such senders ignore);
    /// REMB both ways where offered: a receiver of the room view caps its bitrate with it, and Cohost sends it to a
    /// WebRTC sender (what makes a browser adapt).
    static func videoFeedback(offered: [String], receivesRoomView: Bool, webRTC: Bool) -> [String] {
        var feedback = offered.isEmpty ? supportedFeedback : supportedFeedback.filter(offered.contains)
        if (receivesRoomView || webRTC) && offered.contains("goog-remb") { feedback.append("goog-remb") }
        return feedback
    }

    /// The offered `rtx/<clock>` payload type whose `apt=` names `pt` (RFC 4588 §8.6).
    static func retransmissionPayloadType(in media: MediaDescription, for pt: UInt8, clockRate: Int) -> UInt8? {
        media.payloadTypes.first { candidate in
            guard let map = media.rtpmaps[candidate], map.encodingName.lowercased() == "rtx",
                map.clockRate == clockRate,
                let fmtp = media.fmtps[candidate]
            else { return false }
            return fmtp.split(separator: ";").contains { $0.filter { $0 != " " } == "apt=\(pt)" }
        }
    }
}
