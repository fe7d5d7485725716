import Testing
@testable import RTP

@Suite struct SessionDescriptionTests {
    /// The example offer of protocol/sdp.md, with `\n` line endings.
    static let designOffer = """
        v=0
        o=- 1 1 IN IP4 127.0.0.1
        s=-
        c=IN IP4 127.0.0.1
        t=0 0
        m=audio 9 RTP/AVP 111
        a=rtpmap:111 opus/48000/2
        a=ssrc:1001
        a=sendonly
        m=video 9 RTP/AVP 96
        a=rtpmap:96 VP8/90000
        a=ssrc:1002
        a=sendonly

        """

    static let srtpOffer = """
        v=0\r
        o=- 7 2 IN IP4 192.0.2.10\r
        s=-\r
        c=IN IP4 192.0.2.10\r
        t=0 0\r
        a=sendonly\r
        m=audio 5004 RTP/SAVP 111 0\r
        a=rtpmap:111 opus/48000/2\r
        a=fmtp:111 minptime=10;useinbandfec=1\r
        a=rtcp-mux\r
        a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:WVNfX19zZW1jdGwgKCkgewkyMjA7fQp9CnVubGVz|2^20|1:32\r
        a=ssrc:3735928559 cname:alice\r
        a=ssrc:3735928559 msid:s a\r
        a=ssrc:16 cname:alice\r
        m=video 5006 RTP/SAVP 97 96\r
        a=mid:v\r
        a=rtpmap:96 VP8/90000\r
        a=rtpmap:97 H264/90000\r
        a=fmtp:97 profile-level-id=42e01f;packetization-mode=1\r
        a=crypto:2 AES_CM_128_HMAC_SHA1_32 inline:c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0\r
        a=inactive\r
        m=application 9 UDP/DTLS/SCTP webrtc-datachannel\r

        """

    static let expectedAudio = MediaDescription(
        kind: .audio, rawKind: "audio", port: 9, proto: "RTP/AVP", formats: ["111"], payloadTypes: [111],
        rtpmaps: [111: RTPMap(encodingName: "opus", clockRate: 48000, channels: 2)], ssrcs: [1001],
        direction: "sendonly")
    static let expectedVideo = MediaDescription(
        kind: .video, rawKind: "video", port: 9, proto: "RTP/AVP", formats: ["96"], payloadTypes: [96],
        rtpmaps: [96: RTPMap(encodingName: "VP8", clockRate: 90000)], ssrcs: [1002], direction: "sendonly")

    @Test func parsesTheDesignOffer() throws {
        let sdp = try SessionDescription.parse(Self.designOffer)
        #expect(sdp.media == [Self.expectedAudio, Self.expectedVideo])
    }

    @Test func acceptsCRLFLineEndings() throws {
        let crlf = Self.designOffer.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\r\n")
        #expect(crlf.utf8.count == Self.designOffer.utf8.count + 13)  // 13 lines
        #expect(try SessionDescription.parse(crlf).media == [Self.expectedAudio, Self.expectedVideo])
    }

    @Test func parsesSRTPOfferWithCryptoFmtpMidAndSessionDirection() throws {
        let sdp = try SessionDescription.parse(Self.srtpOffer)
        #expect(sdp.media.count == 3)
        let audio = sdp.media[0]
        #expect(audio.kind == .audio)
        #expect(audio.port == 5004)
        #expect(audio.proto == "RTP/SAVP")
        #expect(audio.payloadTypes == [111, 0])
        #expect(audio.fmtps == [111: "minptime=10;useinbandfec=1"])
        #expect(audio.rtcpMux == true)
        #expect(audio.ssrcs == [3_735_928_559, 16])
        #expect(audio.direction == "sendonly")  // inherited from the session level
        #expect(
            audio.cryptos == [
                CryptoAttribute(
                    tag: 1, suite: "AES_CM_128_HMAC_SHA1_80",
                    keyParams: "inline:WVNfX19zZW1jdGwgKCkgewkyMjA7fQp9CnVubGVz|2^20|1:32")
            ])
        #expect(audio.cryptos.first?.inlineKey == "WVNfX19zZW1jdGwgKCkgewkyMjA7fQp9CnVubGVz")

        let video = sdp.media[1]
        #expect(video.payloadTypes == [97, 96])
        #expect(video.rtpmaps[97] == RTPMap(encodingName: "H264", clockRate: 90000))
        #expect(video.fmtps[97] == "profile-level-id=42e01f;packetization-mode=1")
        #expect(video.mid == "v")
        #expect(video.direction == "inactive")  // its own attribute wins
        #expect(video.cryptos.first?.tag == 2)
        #expect(video.rtcpMux == false)

        let app = sdp.media[2]
        #expect(app.kind == nil)
        #expect(app.rawKind == "application")
        #expect(app.formats == ["webrtc-datachannel"])
        #expect(app.payloadTypes == [])
    }

    @Test func acceptsPortCountInMediaLine() throws {
        let sdp = try SessionDescription.parse("v=0\nm=audio 49170/2 RTP/AVP 0\n")
        #expect(sdp.media.first?.port == 49170)
    }

    @Test(arguments: [
        ("o=- 1 1 IN IP4 127.0.0.1\nv=0\nm=audio 9 RTP/AVP 0\n", SDPError.missingVersion),
        ("", SDPError.missingVersion),
        ("v=1\nm=audio 9 RTP/AVP 0\n", SDPError.unsupportedVersion("1")),
        ("v=0\ns=-\n", SDPError.noMedia),
        ("v=0\nthis is not sdp\n", SDPError.malformedLine(line: 2)),
        ("v=0\nM=audio 9 RTP/AVP 0\n", SDPError.malformedLine(line: 2)),
        ("v=0\nm=audio 9 RTP/AVP\n", SDPError.badMediaLine(line: 2)),
        ("v=0\nm=audio 65536 RTP/AVP 0\n", SDPError.badPort(line: 2)),
        ("v=0\nm=audio -1 RTP/AVP 0\n", SDPError.badPort(line: 2)),
        ("v=0\nm=audio nine RTP/AVP 0\n", SDPError.badPort(line: 2)),
        ("v=0\nm=audio 9 RTP/AVP 128\n", SDPError.badPayloadType(line: 2)),
        ("v=0\nm=audio 9 RTP/AVP opus\n", SDPError.badPayloadType(line: 2)),
        ("v=0\nm=audio 9 RTP/AVP 111\na=rtpmap:111 opus\n", SDPError.badRtpmap(line: 3)),
        ("v=0\nm=audio 9 RTP/AVP 111\na=rtpmap:111 opus/0/2\n", SDPError.badRtpmap(line: 3)),
        ("v=0\nm=audio 9 RTP/AVP 111\na=rtpmap:111 opus/48000/x\n", SDPError.badRtpmap(line: 3)),
        ("v=0\nm=audio 9 RTP/AVP 111\na=rtpmap:300 opus/48000\n", SDPError.badPayloadType(line: 3)),
        ("v=0\nm=audio 9 RTP/AVP 111\na=ssrc:4294967296\n", SDPError.badSsrc(line: 3)),
        ("v=0\nm=audio 9 RTP/AVP 111\na=ssrc:abc cname:x\n", SDPError.badSsrc(line: 3)),
        ("v=0\nm=audio 9 RTP/SAVP 111\na=crypto:1 AES_CM_128_HMAC_SHA1_80\n", SDPError.badCrypto(line: 3)),
        ("v=0\nm=audio 9 RTP/SAVP 111\na=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:\n", SDPError.badCrypto(line: 3)),
        ("v=0\nm=audio 9 RTP/SAVP 111\na=crypto:x AES_CM_128_HMAC_SHA1_80 inline:abc\n", SDPError.badCrypto(line: 3)),
    ])
    func rejectsMalformedOffers(text: String, error: SDPError) {
        #expect(throws: error) { try SessionDescription.parse(text) }
    }

    @Test func boundsLineLengthLineCountAndSize() {
        let longLine = "v=0\na=" + String(repeating: "x", count: 5000) + "\nm=audio 9 RTP/AVP 0\n"
        #expect(throws: SDPError.lineTooLong(line: 2)) { try SessionDescription.parse(longLine) }
        let manyLines = "v=0\n" + String(repeating: "a=x\n", count: 4100)
        #expect(throws: SDPError.tooManyLines) { try SessionDescription.parse(manyLines) }
        let huge = String(repeating: "a", count: 70_000)
        #expect(throws: SDPError.tooLarge(bytes: 70_000)) { try SessionDescription.parse(huge) }
    }

    @Test func errorsDescribeThemselves() {
        #expect(SDPError.badPort(line: 6).description == "SDP line 6: m= port is not a number in 0...65535")
        #expect(SDPError.noMedia.description == "SDP has no m= line")
    }
}

@Suite struct SDPAnswerTests {
    @Test func answersTheDesignOffer() throws {
        let offer = try SessionDescription.parse(SessionDescriptionTests.designOffer)
        let answer = makeAnswer(
            offer: offer, address: "203.0.113.5", port: 40000,
            media: [
                AnswerMedia(
                    kind: .audio, rawKind: "audio", accepted: true, payloadType: 111,
                    rtpmap: RTPMap(encodingName: "opus", clockRate: 48000, channels: 2)),
                AnswerMedia(
                    kind: .video, rawKind: "video", accepted: true, payloadType: 96,
                    rtpmap: RTPMap(encodingName: "VP8", clockRate: 90000)),
            ], sessionId: 42)
        #expect(
            answer == """
                v=0\r
                o=- 42 1 IN IP4 203.0.113.5\r
                s=Cohost\r
                c=IN IP4 203.0.113.5\r
                t=0 0\r
                m=audio 40000 RTP/AVP 111\r
                a=rtpmap:111 opus/48000/2\r
                a=rtcp-mux\r
                a=recvonly\r
                m=video 40000 RTP/AVP 96\r
                a=rtpmap:96 VP8/90000\r
                a=rtcp-mux\r
                a=recvonly\r

                """)
    }

    @Test func answersSRTPWithCryptoFmtpMidAndRejections() throws {
        let offer = try SessionDescription.parse(SessionDescriptionTests.srtpOffer)
        let key = CryptoAttribute(
            tag: 1, suite: "AES_CM_128_HMAC_SHA1_80",
            keyParams: "inline:d0RmdmcmVCspeEc3QGZiNWpVLFJhQX1cfHAwJSoj")
        let answer = makeAnswer(
            offer: offer, address: "198.51.100.1", port: 5000,
            media: [
                AnswerMedia(
                    kind: .audio, rawKind: "audio", accepted: true, payloadType: 111,
                    rtpmap: RTPMap(encodingName: "opus", clockRate: 48000, channels: 2),
                    fmtp: "useinbandfec=1", crypto: key),
                AnswerMedia(
                    kind: .video, rawKind: "video", accepted: true, payloadType: 97,
                    rtpmap: RTPMap(encodingName: "H264", clockRate: 90000),
                    fmtp: "packetization-mode=1", crypto: nil),
                // The application line has no entry: rejected.
            ], sessionId: 9_007_199_254_740_993)
        #expect(
            answer == """
                v=0\r
                o=- 9007199254740993 1 IN IP4 198.51.100.1\r
                s=Cohost\r
                c=IN IP4 198.51.100.1\r
                t=0 0\r
                m=audio 5000 RTP/SAVP 111\r
                a=rtpmap:111 opus/48000/2\r
                a=fmtp:111 useinbandfec=1\r
                a=rtcp-mux\r
                a=recvonly\r
                a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:d0RmdmcmVCspeEc3QGZiNWpVLFJhQX1cfHAwJSoj\r
                m=video 5000 RTP/SAVP 97\r
                a=mid:v\r
                a=rtpmap:97 H264/90000\r
                a=fmtp:97 packetization-mode=1\r
                a=rtcp-mux\r
                a=recvonly\r
                m=application 0 UDP/DTLS/SCTP webrtc-datachannel\r

                """)
    }

    @Test func rejectedLinesKeepOfferedFormatsWithPortZero() throws {
        let offer = try SessionDescription.parse(SessionDescriptionTests.designOffer)
        let answer = makeAnswer(
            offer: offer, address: "10.0.0.1", port: 7000,
            media: [
                .rejected(offer.media[0]),
                AnswerMedia(kind: .video, rawKind: "video", accepted: true, payloadType: nil),
            ], sessionId: 1)
        #expect(answer.hasSuffix("t=0 0\r\nm=audio 0 RTP/AVP 111\r\nm=video 0 RTP/AVP 96\r\n"))
    }

    @Test func answerParsesBackWithTheSameMediaOrder() throws {
        let offer = try SessionDescription.parse(SessionDescriptionTests.srtpOffer)
        let text = makeAnswer(offer: offer, address: "2001:db8::1", port: 5000, media: [], sessionId: 3)
        #expect(text.contains("c=IN IP6 2001:db8::1\r\n"))
        let parsed = try SessionDescription.parse(text)
        #expect(parsed.media.map(\.rawKind) == ["audio", "video", "application"])
        #expect(parsed.media.map(\.port) == [0, 0, 0])
    }
}
