import Testing
@testable import RTP

/// What a browser's offer says about its transport (RFC 8839 ICE credentials, RFC 8122 fingerprint, RFC 4145
/// setup, RFC 9143 BUNDLE), read at the session or the media level.
@Suite struct WebRTCOfferParsingTests {
    /// Shaped like Chromium's offers: BUNDLE, credentials and fingerprint per section, RTX, msid lines.
    static let chromeLike = """
        v=0\r
        o=- 4611731400430051336 2 IN IP4 127.0.0.1\r
        s=-\r
        t=0 0\r
        a=group:BUNDLE 0 1\r
        a=extmap-allow-mixed\r
        a=msid-semantic: WMS stream\r
        m=audio 9 UDP/TLS/RTP/SAVPF 111\r
        c=IN IP4 0.0.0.0\r
        a=rtcp:9 IN IP4 0.0.0.0\r
        a=ice-ufrag:Xk3v\r
        a=ice-pwd:r0ulq5Tj9qU1wUOCzwrR4bPb\r
        a=ice-options:trickle\r
        a=fingerprint:sha-256 1F:0E:6E:A2:33:C6:14:B8:30:0E:35:E4:3F:9A:1C:59:42:AF:38:D2:05:9F:0F:76:4C:31:10:4B:8C:A9:41:26\r
        a=setup:actpass\r
        a=mid:0\r
        a=sendrecv\r
        a=rtcp-mux\r
        a=rtpmap:111 opus/48000/2\r
        a=fmtp:111 minptime=10;useinbandfec=1\r
        a=ssrc:1111 cname:abc\r
        m=video 9 UDP/TLS/RTP/SAVPF 96 97\r
        c=IN IP4 0.0.0.0\r
        a=ice-ufrag:Xk3v\r
        a=ice-pwd:r0ulq5Tj9qU1wUOCzwrR4bPb\r
        a=fingerprint:sha-256 1F:0E:6E:A2:33:C6:14:B8:30:0E:35:E4:3F:9A:1C:59:42:AF:38:D2:05:9F:0F:76:4C:31:10:4B:8C:A9:41:26\r
        a=setup:actpass\r
        a=mid:1\r
        a=sendrecv\r
        a=rtcp-mux\r
        a=rtpmap:96 VP8/90000\r
        a=rtcp-fb:96 goog-remb\r
        a=rtcp-fb:96 nack pli\r
        a=rtpmap:97 rtx/90000\r
        a=fmtp:97 apt=96\r
        a=ssrc-group:FID 2222 3333\r
        a=ssrc:2222 cname:abc\r
        a=ssrc:3333 cname:abc\r

        """

    @Test func aChromeLikeOfferCarriesItsCredentialsFingerprintSetupAndBundle() throws {
        let sdp = try SessionDescription.parse(Self.chromeLike)
        #expect(sdp.bundleGroups == [["0", "1"]])
        for media in sdp.media {
            #expect(media.iceUfrag == "Xk3v" && media.icePassword == "r0ulq5Tj9qU1wUOCzwrR4bPb")
            #expect(media.setup == "actpass")
            #expect(media.fingerprint?.algorithm == "sha-256")
            #expect(media.fingerprint?.digest.count == 32 && media.fingerprint?.digest.first == 0x1F)
            #expect(media.fingerprint?.digest.last == 0x26)
            #expect(media.proto == "UDP/TLS/RTP/SAVPF" && media.rtcpMux)
        }
        #expect(sdp.media[1].retransmissionSSRCs == [2222: 3333])
        #expect(sdp.media[1].rtcpFeedback[96] == ["goog-remb", "nack pli"])
    }

    @Test func sessionLevelTransportAttributesApplyToSectionsThatSetNone() throws {
        let text = """
            v=0\r
            o=- 1 1 IN IP4 127.0.0.1\r
            s=-\r
            t=0 0\r
            a=ice-ufrag:sess\r
            a=ice-pwd:0123456789abcdefghijkl\r
            a=fingerprint:SHA-1 00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF:00:11:22:33\r
            a=setup:ACTIVE\r
            m=audio 9 UDP/TLS/RTP/SAVPF 111\r
            a=rtpmap:111 opus/48000/2\r
            a=ice-ufrag:mine\r
            m=audio 9 UDP/TLS/RTP/SAVPF 111\r
            a=rtpmap:111 opus/48000/2\r

            """
        let sdp = try SessionDescription.parse(text)
        #expect(sdp.media[0].iceUfrag == "mine" && sdp.media[1].iceUfrag == "sess")
        #expect(sdp.media.allSatisfy { $0.icePassword == "0123456789abcdefghijkl" && $0.setup == "active" })
        #expect(sdp.media.allSatisfy { $0.fingerprint?.algorithm == "sha-1" && $0.fingerprint?.digest.count == 20 })
    }

    @Test(arguments: [
        "a=ice-ufrag:ab", "a=ice-ufrag:bad ufrag!", "a=ice-pwd:short", "a=fingerprint:sha-256 ZZ:00",
        "a=fingerprint:sha-256", "a=fingerprint:sha-256 00:11", "a=setup:sideways",
    ])
    func malformedTransportAttributesAreRefused(line: String) {
        let text = "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\nm=audio 9 RTP/AVP 111\r\n\(line)\r\n"
        #expect(throws: SDPError.malformedLine(line: 6)) { try SessionDescription.parse(text) }
    }
}
