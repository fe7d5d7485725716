import Testing
@testable import Rooms

/// What an offer's direction makes Cohost send back (protocol/sdp.md, "What Cohost sends").
@Suite struct ReturnNegotiationTests {
    static func offer(audio: String?, video: String? = nil, fmtp: String? = nil, audioSSRC: Bool = true) -> String {
        var sdp = "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
        sdp += "m=audio 9 RTP/AVP 111\r\na=rtpmap:111 opus/48000/2\r\n"
        if let fmtp { sdp += "a=fmtp:111 \(fmtp)\r\n" }
        if audioSSRC { sdp += "a=ssrc:1001\r\n" }
        if let audio { sdp += "a=\(audio)\r\n" }
        if let video { sdp += "m=video 9 RTP/AVP 96\r\na=rtpmap:96 VP8/90000\r\na=ssrc:1002\r\na=\(video)\r\n" }
        return sdp
    }

    func negotiate(_ offer: String, inUse: Set<UInt32> = []) throws -> Negotiation {
        try JoinNegotiator.negotiate(
            offer: offer, address: "127.0.0.1", port: 7882, sessionID: 42, audioOnly: false, sendsRoomView: false,
            ssrcInUse: { inUse.contains($0) })
    }

    @Test func aSendrecvAudioLineIsAnsweredSendrecvWithCohostsSSRCAndReceivesMixMinus() throws {
        let n = try negotiate(Self.offer(audio: "sendrecv"))
        let back = try #require(n.returnAudio)
        #expect(n.audio?.ssrc == 1001)
        #expect(back.channels == 1 && back.payloadType == 111 && back.receiverSSRC == nil)
        #expect(back.ssrc != 1001)
        #expect(n.answer.contains("a=sendrecv\r\na=ssrc:\(back.ssrc) cname:cohost-42\r\n"))
    }

    @Test func noDirectionMeansSendrecv() throws {
        let n = try negotiate(Self.offer(audio: nil))
        #expect(n.returnAudio != nil && n.audio != nil)
        #expect(n.answer.contains("a=sendrecv\r\n"))
    }

    @Test func stereoIsSentOnlyWhenTheOfferAsksForIt() throws {
        #expect(try negotiate(Self.offer(audio: "sendrecv", fmtp: "minptime=10; stereo=1")).returnAudio?.channels == 2)
        #expect(try negotiate(Self.offer(audio: "sendrecv", fmtp: "stereo=0")).returnAudio?.channels == 1)
    }

    @Test func aSendonlyLineGetsNothingBack() throws {
        let n = try negotiate(Self.offer(audio: "sendonly"))
        #expect(n.returnAudio == nil && n.audio != nil)
        #expect(n.answer.contains("a=recvonly\r\n") && !n.answer.contains("a=ssrc"))
    }

    @Test func aRecvonlyLineNeedsNoSSRCAndOnlyReceives() throws {
        let n = try negotiate(Self.offer(audio: "recvonly", audioSSRC: false))
        #expect(n.audio == nil)
        #expect(n.returnAudio?.receiverSSRC == nil)
        #expect(n.answer.contains("a=sendonly\r\na=ssrc:"))
        // With one, that SSRC is the receiver's: its RTCP comes from it.
        #expect(try negotiate(Self.offer(audio: "recvonly")).returnAudio?.receiverSSRC == 1001)
    }

    @Test func anInactiveLineIsAcceptedWithNothingEitherWay() throws {
        let n = try negotiate(Self.offer(audio: "inactive", video: "sendonly"))
        #expect(n.audio == nil && n.returnAudio == nil && n.video?.ssrc == 1002)
        #expect(n.answer.contains("m=audio 7882 RTP/AVP 111\r\n"))
        #expect(n.answer.contains("a=inactive\r\n"))
    }

    @Test func withoutARoomViewAVideoLineIsOnlyReceived() throws {
        let n = try negotiate(Self.offer(audio: "sendonly", video: "sendrecv"))
        #expect(n.returnVideo == nil && n.video != nil)
        #expect(n.answer.hasSuffix("a=recvonly\r\n"))
        // A receive-only video line is then a slot: other participants' cameras, forwarded.
        let slot = try negotiate(Self.offer(audio: "sendonly", video: "recvonly"))
        #expect(slot.returnVideo == nil && slot.slots.map(\.mid) == ["1"])
        #expect(slot.answer.contains("a=sendonly\r\na=ssrc:\(slot.slots[0].ssrc) cname:"))
    }

    @Test func cohostPicksAgainWhileItsPickIsInUse() throws {
        var refused: [UInt32] = []
        let n = try JoinNegotiator.negotiate(
            offer: Self.offer(audio: "sendrecv"), address: "127.0.0.1", port: 7882, sessionID: 1, audioOnly: false,
            ssrcInUse: { ssrc in
                guard refused.count < 3 else { return false }
                refused.append(ssrc)
                return true
            })
        let picked = try #require(n.returnAudio?.ssrc)
        #expect(refused.count == 3 && !refused.contains(picked) && picked != 1001)
    }

    @Test func aWebRTCOfferIsRefusedAsAWholeNotAnsweredAsPlainRTP() {
        let offer = Self.offer(audio: "sendrecv").replacingOccurrences(of: "RTP/AVP", with: "UDP/TLS/RTP/SAVPF")
        do {
            _ = try JoinNegotiator.negotiate(
                offer: offer, address: "127.0.0.1", port: 7882, sessionID: 1, audioOnly: false)
            Issue.record("accepted a WebRTC offer")
        } catch {
            #expect(error.kind == .unsupported && error.code == "unsupported_transport")
        }
    }

    @Test func anOfferThatOnlyListensIsAccepted() throws {
        let n = try negotiate(Self.offer(audio: "recvonly", audioSSRC: false))
        #expect(n.audio == nil && n.video == nil && n.returnAudio != nil)
    }
}
