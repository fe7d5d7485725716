import Forwarding
import RTP
import SRTP

/// A receive slot (protocol/sdp.md, "Receive slots"): a `recvonly` video line beyond the one carrying the room
/// view, which Cohost fills with another participant's video, forwarded as received.
struct SlotOffer: Sendable {
    /// The line's `a=mid` (its index in the offer when it has none): what subscriptions name.
    var mid: String
    /// Cohost's SSRC on this line, announced in the answer.
    var ssrc: UInt32
    /// The payload type for each codec the line accepts, in the offer's order.
    var formats: [(payloadType: UInt8, codec: ForwardCodec)]
    /// The answer's SDES key, protecting what Cohost sends on this line.
    var srtp: (profile: SRTPProfile, key: [UInt8])?
    /// The participant's own SSRC on this line, when it lists one (its RTCP about the slot may come from it).
    var receiverSSRC: UInt32?
    var receiverSRTP: (profile: SRTPProfile, key: [UInt8])?

    /// The senders' codecs the line takes.
    var accepts: Set<String> { formats.reduce(into: []) { $0.formUnion($1.codec.accepts) } }
}

extension JoinNegotiator {
    /// At most this many slots per participant; further lines are answered with port 0.
    static let maxSlots = 16
}

extension JoinNegotiator.Lines {
    /// Whether `media` is a screen share: a video line the participant sends on, marked `a=content:slides`, in a room
    /// with video.
    func isScreen(_ media: MediaDescription) -> Bool {
        let direction = media.direction ?? "sendrecv"
        return media.kind == .video && !audioOnly && media.port != 0 && media.content?.lowercased() == "slides"
            && (direction == "sendonly" || direction == "sendrecv")
    }

    /// A screen share line: accepted as a stream Cohost receives (VP8, else H.264), answered `recvonly` (nothing goes
    /// back on it), or rejected when it offers neither.
    mutating func negotiateScreen<R: RandomNumberGenerator>(
        _ media: MediaDescription, using random: inout R
    ) throws(RoomError) -> JoinNegotiator.LineOutcome {
        guard
            let pt = JoinNegotiator.codec(in: media, audioTaken: true, videoTaken: false, audioOnly: false),
            let map = media.rtpmaps[pt]
        else { return JoinNegotiator.LineOutcome(answer: .rejected(media)) }
        var roles = JoinNegotiator.Roles(media, sendsRoomView: false)
        roles.participantReceives = false
        return try accept(media, payloadType: pt, rtpmap: map, roles: roles, using: &random)
    }
}

extension JoinNegotiator.Lines {
    /// Whether `media` is a slot: a `recvonly` video line of a room with video, once the room view has its line
    /// (or when the room sends none).
    func isSlot(_ media: MediaDescription, roomViewTaken: Bool) -> Bool {
        media.kind == .video && !audioOnly && media.port != 0 && (media.direction ?? "sendrecv") == "recvonly"
            && (roomViewTaken || !sendsRoomView)
    }

    /// A slot line: accepted `sendonly` with every forwardable codec it offers (VP8; H.264 in packetization-mode
    /// 1, one payload type per profile), or rejected when it offers none.
    mutating func negotiateSlot<R: RandomNumberGenerator>(
        _ media: MediaDescription, index: Int, using random: inout R
    ) throws(RoomError) -> (answer: AnswerMedia, slot: SlotOffer?) {
        var formats: [(payloadType: UInt8, codec: ForwardCodec, rtpmap: RTPMap)] = []
        for pt in media.payloadTypes {
            guard let map = media.rtpmaps[pt], map.clockRate == 90_000,
                let codec = ForwardCodec(name: map.encodingName, fmtp: media.fmtps[pt]),
                !formats.contains(where: { $0.codec == codec })
            else { continue }
            formats.append((pt, codec, map))
        }
        guard let first = formats.first else { return (.rejected(media), nil) }
        let keys = try JoinNegotiator.sdes(media, using: &random)
        let ours = pickSSRC(using: &random)
        let mid = media.mid ?? String(index)
        var answer = AnswerMedia(
            kind: media.kind, rawKind: media.rawKind, accepted: true, payloadType: first.payloadType,
            rtpmap: first.rtpmap, fmtp: media.fmtps[first.payloadType], crypto: keys?.answer)
        answer.moreFormats = formats.dropFirst().map { ($0.payloadType, $0.rtpmap, media.fmtps[$0.payloadType]) }
        answer.direction = "sendonly"
        answer.rtcpFeedback = JoinNegotiator.videoFeedback(
            offered: media.rtcpFeedback[first.payloadType] ?? [], receivesRoomView: true, webRTC: webRTC != nil)
        answer.sendSSRC = (ours, "cohost-\(sessionID)")
        answer.msidStream = "cohost-\(sessionID)-slot-\(mid)"
        if webRTC != nil { answer.midExtension = media.extensions[midExtensionURI] }
        let slot = SlotOffer(
            mid: mid, ssrc: ours, formats: formats.map { ($0.payloadType, $0.codec) },
            srtp: keys.map { ($0.offered.profile, $0.server) }, receiverSSRC: media.ssrcs.first,
            receiverSRTP: keys?.offered)
        return (answer, slot)
    }
}
