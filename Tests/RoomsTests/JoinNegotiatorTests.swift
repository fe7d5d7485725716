import Testing
@testable import Rooms

@Suite struct JoinNegotiatorTests {
    static let offer = """
        v=0\r
        o=- 1 1 IN IP4 127.0.0.1\r
        s=-\r
        c=IN IP4 127.0.0.1\r
        t=0 0\r
        m=audio 9 RTP/AVP 0 111\r
        a=rtpmap:0 PCMU/8000\r
        a=rtpmap:111 opus/48000/2\r
        a=ssrc:1001\r
        a=sendonly\r
        m=video 9 RTP/AVP 96\r
        a=rtpmap:96 VP8/90000\r
        a=ssrc:1002\r
        a=sendonly\r

        """

    @Test func acceptsOpusAndVP8AndAnswersWithTheServerPort() throws {
        let n = try JoinNegotiator.negotiate(
            offer: Self.offer, address: "192.0.2.1", port: 7882, sessionID: 5, audioOnly: false)
        #expect(n.audio?.ssrc == 1001 && n.audio?.payloadType == 111 && n.audio?.clockRate == 48_000)
        #expect(n.video?.ssrc == 1002 && n.video?.payloadType == 96)
        #expect(n.answer.contains("c=IN IP4 192.0.2.1\r\n"))
        #expect(n.answer.contains("m=audio 7882 RTP/AVP 111\r\n"))
        #expect(n.answer.contains("m=video 7882 RTP/AVP 96\r\n"))
        #expect(n.answer.contains("a=rtcp-mux\r\n"))
    }

    @Test func anAudioOnlyRoomRejectsTheVideoLine() throws {
        let n = try JoinNegotiator.negotiate(
            offer: Self.offer, address: "127.0.0.1", port: 7882, sessionID: 1, audioOnly: true)
        #expect(n.video == nil)
        #expect(n.answer.contains("m=video 0 "))
    }

    static func videoOnly(_ lines: String) -> String {
        "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n" + lines
    }

    @Test func anOfferWithNoDecodableCodecIsUnsupportedMedia() {
        let h265Only = Self.videoOnly("m=video 9 RTP/AVP 102\r\na=rtpmap:102 H265/90000\r\na=ssrc:7\r\n")
        #expect(
            throws: RoomError(
                .unsupported, "unsupported_media",
                "the offer has no codec Cohost decodes (Opus/48000 audio, VP8/90000 or H264/90000 video)")
        ) {
            try JoinNegotiator.negotiate(offer: h265Only, address: "127.0.0.1", port: 1, sessionID: 1, audioOnly: false)
        }
    }

    @Test func acceptsH264InPacketizationMode1AndEchoesItsFmtp() throws {
        let offer = Self.videoOnly(
            """
            m=video 9 RTP/AVP 102 103\r
            a=rtpmap:102 H264/90000\r
            a=fmtp:102 packetization-mode=2\r
            a=rtpmap:103 H264/90000\r
            a=fmtp:103 profile-level-id=42e01f;packetization-mode=1\r
            a=ssrc:7\r

            """)
        let n = try JoinNegotiator.negotiate(
            offer: offer, address: "127.0.0.1", port: 7882, sessionID: 1, audioOnly: false)
        #expect(n.video?.payloadType == 103 && n.video?.codec == "H264")
        #expect(
            n.answer.contains(
                "m=video 7882 RTP/AVP 103\r\na=rtpmap:103 H264/90000\r\na=fmtp:103 profile-level-id=42e01f;packetization-mode=1\r\n"
            ))
    }

    @Test func prefersVP8WhenBothVideoCodecsAreOffered() throws {
        let offer = Self.videoOnly(
            "m=video 9 RTP/AVP 102 96\r\na=rtpmap:102 H264/90000\r\na=rtpmap:96 VP8/90000\r\na=ssrc:7\r\n")
        let n = try JoinNegotiator.negotiate(
            offer: offer, address: "127.0.0.1", port: 7882, sessionID: 1, audioOnly: false)
        #expect(n.video?.payloadType == 96)
    }

    @Test func answersTheFeedbackItSendsAndAsksForFIRWhenThatIsAllTheSenderUnderstands() throws {
        let silent = try JoinNegotiator.negotiate(
            offer: Self.offer, address: "127.0.0.1", port: 1, sessionID: 1, audioOnly: false)
        #expect(silent.answer.contains("a=rtcp-fb:96 nack\r\na=rtcp-fb:96 nack pli\r\na=rtcp-fb:96 ccm fir\r\n"))
        #expect(silent.video?.keyframeRequest == .pli)
        #expect(!silent.answer.contains("a=rtcp-fb:111"))

        let firOnly = Self.videoOnly(
            "m=video 9 RTP/AVPF 96\r\na=rtpmap:96 VP8/90000\r\na=rtcp-fb:* ccm fir\r\na=rtcp-fb:96 nack\r\na=ssrc:7\r\n"
        )
        let n = try JoinNegotiator.negotiate(
            offer: firOnly, address: "127.0.0.1", port: 1, sessionID: 1, audioOnly: false)
        #expect(n.video?.keyframeRequest == .fir)
        #expect(n.answer.contains("a=rtcp-fb:96 nack\r\na=rtcp-fb:96 ccm fir\r\na=rtcp-mux"))
    }

    @Test func acceptsRFC4588RetransmissionsOnTheirOwnSSRC() throws {
        let offer = Self.videoOnly(
            """
            m=video 9 RTP/AVPF 96 97\r
            a=rtpmap:96 VP8/90000\r
            a=rtpmap:97 rtx/90000\r
            a=fmtp:97 apt=96\r
            a=ssrc-group:FID 5000 5001\r
            a=ssrc:5000\r
            a=ssrc:5001\r

            """)
        let n = try JoinNegotiator.negotiate(
            offer: offer, address: "127.0.0.1", port: 1, sessionID: 1, audioOnly: false)
        #expect(n.video?.ssrc == 5000)
        #expect(n.video?.retransmission?.ssrc == 5001 && n.video?.retransmission?.payloadType == 97)
        #expect(n.answer.contains("m=video 1 RTP/AVPF 96 97\r\n"))
        #expect(n.answer.contains("a=rtpmap:97 rtx/90000\r\na=fmtp:97 apt=96\r\n"))
    }

    @Test func malformedSDPIs400() {
        #expect(throws: RoomError.self) {
            try JoinNegotiator.negotiate(offer: "hello", address: "127.0.0.1", port: 1, sessionID: 1, audioOnly: false)
        }
        do {
            _ = try JoinNegotiator.negotiate(
                offer: "hello", address: "127.0.0.1", port: 1, sessionID: 1, audioOnly: false)
        } catch {
            #expect(error.kind == .invalid && error.code == "invalid_sdp")
        }
    }

    @Test func anAcceptedLineWithoutSSRCIsRefused() {
        let noSSRC = Self.offer.replacingOccurrences(of: "a=ssrc:1001\r\n", with: "")
        do {
            _ = try JoinNegotiator.negotiate(
                offer: noSSRC, address: "127.0.0.1", port: 1, sessionID: 1, audioOnly: false)
            Issue.record("expected ssrc_missing")
        } catch {
            #expect(error.code == "ssrc_missing")
        }
    }

    @Test func srtpOfferGetsTheServersOwnKey() throws {
        let key = "WVNfX19zZW1jdGwgKCkgewkyMjA7fQp9CnVubGVz"
        let srtp = Self.offer.replacingOccurrences(of: "m=audio 9 RTP/AVP 0 111", with: "m=audio 9 RTP/SAVP 111")
            .replacingOccurrences(
                of: "a=ssrc:1001", with: "a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:\(key)\r\na=ssrc:1001")
        let n = try JoinNegotiator.negotiate(
            offer: srtp, address: "127.0.0.1", port: 7882, sessionID: 1, audioOnly: false)
        #expect(n.audio?.srtp?.profile == .aesCm128HmacSha1_80)
        #expect(n.audio?.srtp?.key.count == 30)
        #expect(n.answer.contains("m=audio 7882 RTP/SAVP 111"))
        #expect(n.answer.contains("a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:"))
        #expect(!n.answer.contains(key))
    }
}
