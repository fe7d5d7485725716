import RTP
import SRTP

/// Turns an SDP offer into accepted streams and an answer (protocol/sdp.md), in small pure steps: the offer read,
/// its WebRTC transport (JoinNegotiator+WebRTC.swift), each media line on its own (JoinNegotiator+Line.swift), the
/// SSRCs checked across lines, the answer written.
///
/// Codecs Cohost decodes: Opus/48000 for audio, VP8/90000 or H.264/90000 video (VP8 is
/// preferred when both are offered: it is cheaper to decode). Anything else is answered with
/// port 0; an offer with nothing acceptable is 415 `unsupported_media`. A line the participant receives on
/// (`sendrecv`, the default, or `recvonly`) gets the return path: `sendsRoomView` false answers video lines as
/// if they were `sendonly`. `ssrcInUse` says which SSRCs Cohost may not pick for itself. Every random choice
/// (ICE credentials, SSRCs, SDES keys) comes from `random`, so tests can pin answers byte for byte.
enum JoinNegotiator {
    static let maxOfferBytes = 64 * 1024
    static let supportedFeedback = ["nack", "nack pli", "ccm fir"]

    /// `programme`: a viewer's offer (WHEP), which receives the programme's sound and pictures and sends nothing: its
    /// first audio line gets the programme's mix, its first video line the programme's own H.264 in a payload type
    /// of the profile `programme` (a profile-level-id) names; every other line is rejected.
    static func negotiate(
        offer text: String, address: String, port: Int, sessionID: UInt64,
        audioOnly: Bool, sendsRoomView: Bool = true, webRTC identity: WebRTCIdentity? = nil,
        programme: String? = nil, ssrcInUse: @escaping (UInt32) -> Bool = { _ in false }
    ) throws(RoomError) -> Negotiation {
        var random = SystemRandomNumberGenerator()
        return try negotiate(
            offer: text, address: address, port: port, sessionID: sessionID, audioOnly: audioOnly,
            sendsRoomView: sendsRoomView, webRTC: identity, programme: programme, ssrcInUse: ssrcInUse,
            using: &random)
    }

    static func negotiate<R: RandomNumberGenerator>(
        offer text: String, address: String, port: Int, sessionID: UInt64,
        audioOnly: Bool, sendsRoomView: Bool = true, webRTC identity: WebRTCIdentity? = nil,
        programme: String? = nil, ssrcInUse: @escaping (UInt32) -> Bool = { _ in false }, using random: inout R
    ) throws(RoomError) -> Negotiation {
        let offer = try parse(text)
        let webRTC = try webRTCParameters(of: offer, identity: identity, using: &random)
        var lines = Lines(
            sessionID: sessionID, audioOnly: audioOnly, sendsRoomView: sendsRoomView, webRTC: webRTC,
            ssrcInUse: ssrcInUse, taken: Set(offer.media.flatMap(\.ssrcs)))
        lines.programme = programme
        var answers: [AnswerMedia] = []
        var audio: NegotiatedStream?
        var video: NegotiatedStream?
        var returnAudio: ReturnOffer?
        var returnVideo: ReturnOffer?
        var slots: [SlotOffer] = []
        var screen: NegotiatedStream?
        for (index, media) in offer.media.enumerated() {
            if lines.programme != nil {
                let taken = media.kind == .audio ? returnAudio != nil : returnVideo != nil
                guard !taken, media.kind == .audio || media.kind == .video else {
                    answers.append(.rejected(media))
                    continue
                }
                let line = try lines.negotiate(media, audioTaken: false, videoTaken: false, using: &random)
                answers.append(line.answer)
                if let back = line.back {
                    if back.kind == .audio { returnAudio = back } else { returnVideo = back }
                }
                continue
            }
            if screen == nil, lines.isScreen(media) {
                let line = try lines.negotiateScreen(media, using: &random)
                answers.append(line.answer)
                screen = line.stream
                continue
            }
            if lines.isSlot(media, roomViewTaken: returnVideo != nil) {
                guard slots.count < maxSlots else {
                    answers.append(.rejected(media))
                    continue
                }
                let (answer, slot) = try lines.negotiateSlot(media, index: index, using: &random)
                answers.append(answer)
                if let slot { slots.append(slot) }
                continue
            }
            let line = try lines.negotiate(media, audioTaken: audio != nil, videoTaken: video != nil, using: &random)
            answers.append(line.answer)
            if let stream = line.stream {
                if stream.kind == .audio { audio = stream } else { video = stream }
            }
            if let back = line.back {
                if back.kind == .audio { returnAudio = back } else { returnVideo = back }
            }
        }
        guard
            audio != nil || video != nil || returnAudio != nil || returnVideo != nil || !slots.isEmpty || screen != nil
        else {
            throw RoomError(
                .unsupported, "unsupported_media",
                audioOnly
                    ? "the offer has no Opus/48000 audio (this room is audio-only)"
                    : "the offer has no codec Cohost decodes (Opus/48000 audio, VP8/90000 or H264/90000 video)")
        }
        try checkSSRCs(audio: audio, video: video, returnAudio: returnAudio, returnVideo: returnVideo)
        try checkSlotSSRCs(slots, audio: audio, video: video, returnAudio: returnAudio, returnVideo: returnVideo)
        if let screen {
            let others =
                [
                    audio?.ssrc, video?.ssrc, video?.retransmission?.ssrc, returnAudio?.receiverSSRC,
                    returnVideo?.receiverSSRC,
                ].compactMap { $0 } + slots.compactMap(\.receiverSSRC)
            for ssrc in [screen.ssrc, screen.retransmission?.ssrc].compactMap({ $0 }) where others.contains(ssrc) {
                throw .badRequest("invalid_sdp", "the screen share's SSRC \(ssrc) is also another line's")
            }
        }
        let transport = webRTC.map {
            AnswerTransport(
                iceUfrag: $0.localUfrag, icePassword: $0.localPassword, fingerprint: identity?.fingerprint ?? "",
                setup: $0.dtlsServer ? "passive" : "active",
                candidates: (identity?.addresses ?? [address]).map { ($0, port) }, tcpPort: identity?.tcpPort)
        }
        return Negotiation(
            audio: audio, video: video, returnAudio: returnAudio, returnVideo: returnVideo, slots: slots,
            screen: screen,
            answer: makeAnswer(
                offer: offer, address: address, port: port, media: answers, sessionId: sessionID,
                transport: transport),
            webRTC: webRTC)
    }

    /// The offer, within its size limit and well formed.
    static func parse(_ text: String) throws(RoomError) -> SessionDescription {
        guard text.utf8.count <= maxOfferBytes else {
            throw RoomError(.tooLarge, "body_too_large", "SDP offer larger than \(maxOfferBytes) bytes")
        }
        do { return try SessionDescription.parse(text) } catch {
            throw .badRequest("invalid_sdp", "malformed SDP offer: \(error)")
        }
    }

    /// No SSRC may stand for two things: audio and video, a stream and its retransmissions, a line the participant
    /// only receives on and any other.
    static func checkSSRCs(
        audio: NegotiatedStream?, video: NegotiatedStream?, returnAudio: ReturnOffer?, returnVideo: ReturnOffer?
    ) throws(RoomError) {
        if let a = audio, let v = video, a.ssrc == v.ssrc {
            throw .badRequest("invalid_sdp", "audio and video use the same SSRC \(a.ssrc)")
        }
        if let v = video, let rtx = v.retransmission, rtx.ssrc == v.ssrc || rtx.ssrc == audio?.ssrc {
            throw .badRequest("invalid_sdp", "the retransmission SSRC \(rtx.ssrc) is also a media SSRC")
        }
        if let receiver = (returnAudio?.receiverSSRC ?? nil), receiver == returnVideo?.receiverSSRC ?? nil {
            throw .badRequest("invalid_sdp", "two receive-only lines use the same SSRC \(receiver)")
        }
        let own = [audio?.ssrc, video?.ssrc, video?.retransmission?.ssrc]
        for receiver in [returnAudio?.receiverSSRC, returnVideo?.receiverSSRC].compactMap({ $0 })
        where own.contains(receiver) {
            throw .badRequest("invalid_sdp", "the receive-only SSRC \(receiver) is also a media SSRC")
        }
    }

    /// A slot's receiver SSRC is the participant's on that line alone.
    static func checkSlotSSRCs(
        _ slots: [SlotOffer], audio: NegotiatedStream?, video: NegotiatedStream?, returnAudio: ReturnOffer?,
        returnVideo: ReturnOffer?
    ) throws(RoomError) {
        var seen = Set(
            [
                audio?.ssrc, video?.ssrc, video?.retransmission?.ssrc, returnAudio?.receiverSSRC,
                returnVideo?.receiverSSRC,
            ]
            .compactMap { $0 })
        for slot in slots {
            guard let receiver = slot.receiverSSRC else { continue }
            guard seen.insert(receiver).inserted else {
                throw .badRequest("invalid_sdp", "the receive-only SSRC \(receiver) of slot \(slot.mid) is used twice")
            }
        }
    }

    /// ice-chars (RFC 8839 §5.4): 6 bits each.
    static func randomICEString<R: RandomNumberGenerator>(_ count: Int, using random: inout R) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        return String((0..<count).map { _ in alphabet[Int(random.next() & 63)] })
    }

    /// From the system's random source.
    static func randomICEString(_ count: Int) -> String {
        var random = SystemRandomNumberGenerator()
        return randomICEString(count, using: &random)
    }
}
