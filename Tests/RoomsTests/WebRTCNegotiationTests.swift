import Foundation
import RTP
import Testing

@testable import Rooms

/// WebRTC offers (UDP/TLS/RTP/SAVPF) from real clients, and the answer Cohost gives them (protocol/sdp.md).
@Suite struct WebRTCNegotiationTests {
    static let identity = WebRTCIdentity(
        fingerprint: "sha-256 " + Array(repeating: "AB", count: 32).joined(separator: ":"), addresses: ["192.0.2.7"])

    /// OBS Studio's WHIP output (libdatachannel): session-level ICE and DTLS, H.264 + Opus, sendonly, one SSRC each.
    static let obs = """
        v=0\r
        o=rtc 2939238012 0 IN IP4 127.0.0.1\r
        s=-\r
        t=0 0\r
        a=group:BUNDLE 0 1\r
        a=group:LS 0 1\r
        a=msid-semantic:WMS *\r
        a=setup:actpass\r
        a=ice-ufrag:hTUD\r
        a=ice-pwd:0dYMNSh0Qzd4VUYXY0YLZP\r
        a=ice-options:ice2,trickle\r
        a=fingerprint:sha-256 7D:64:9F:2C:0A:4E:C2:96:2B:6E:1F:21:7B:96:95:A3:05:C6:63:1D:7E:2F:63:FD:A6:51:5A:3E:2B:92:E1:4D\r
        m=audio 61876 UDP/TLS/RTP/SAVPF 111\r
        c=IN IP4 127.0.0.1\r
        a=mid:0\r
        a=sendonly\r
        a=ssrc:3005566185 cname:Xr5rH1aeK9hJFz2d\r
        a=ssrc:3005566185 msid:q1aZ8VbRm3Y0dL6w q1aZ8VbRm3Y0dL6w-audio\r
        a=msid:q1aZ8VbRm3Y0dL6w q1aZ8VbRm3Y0dL6w-audio\r
        a=rtcp-mux\r
        a=rtpmap:111 opus/48000/2\r
        a=fmtp:111 minptime=10;maxaveragebitrate=96000;stereo=1;sprop-stereo=1;useinbandfec=1\r
        a=candidate:1 1 UDP 2122317823 127.0.0.1 61876 typ host\r
        a=end-of-candidates\r
        m=video 61876 UDP/TLS/RTP/SAVPF 96\r
        c=IN IP4 127.0.0.1\r
        a=mid:1\r
        a=sendonly\r
        a=ssrc:3005566186 cname:Xr5rH1aeK9hJFz2d\r
        a=ssrc:3005566186 msid:q1aZ8VbRm3Y0dL6w q1aZ8VbRm3Y0dL6w-video\r
        a=msid:q1aZ8VbRm3Y0dL6w q1aZ8VbRm3Y0dL6w-video\r
        a=rtcp-mux\r
        a=rtpmap:96 H264/90000\r
        a=rtcp-fb:96 nack\r
        a=rtcp-fb:96 nack pli\r
        a=rtcp-fb:96 goog-remb\r
        a=fmtp:96 profile-level-id=42e01f;packetization-mode=1;level-asymmetry-allowed=1\r

        """

    /// aiortc 1.x: media-level ICE and DTLS with three fingerprints, VP8 first with RTX (ssrc-group:FID), sendrecv.
    static let aiortc = """
        v=0\r
        o=- 4004730207 4004730207 IN IP4 0.0.0.0\r
        s=-\r
        t=0 0\r
        a=group:BUNDLE 0 1\r
        a=msid-semantic:WMS *\r
        m=audio 50630 UDP/TLS/RTP/SAVPF 96 9 0 8\r
        c=IN IP4 127.0.0.1\r
        a=sendrecv\r
        a=extmap:1 urn:ietf:params:rtp-hdrext:sdes:mid\r
        a=extmap:2 urn:ietf:params:rtp-hdrext:ssrc-audio-level\r
        a=mid:0\r
        a=msid:8e562973-9599-44fa-a79c-445f749a742b e1d530e6-03b4-40bc-9fdf-80f0fdc8059c\r
        a=rtcp:9 IN IP4 0.0.0.0\r
        a=rtcp-mux\r
        a=ssrc:689973908 cname:04e31703-e451-4e27-8dc0-4b0f469be249\r
        a=rtpmap:96 opus/48000/2\r
        a=rtpmap:9 G722/8000\r
        a=rtpmap:0 PCMU/8000\r
        a=rtpmap:8 PCMA/8000\r
        a=candidate:16572de626da4e5384a0ce2d0d93678a 1 udp 2130706431 127.0.0.1 50630 typ host\r
        a=end-of-candidates\r
        a=ice-ufrag:gI7B\r
        a=ice-pwd:j6OIrWFntvVFGEb8C1YMfe\r
        a=fingerprint:sha-256 3A:20:9D:83:96:B2:47:18:AF:EE:0D:73:50:BA:21:AE:55:13:AD:54:56:E1:22:B3:CE:A5:B5:81:59:08:33:EC\r
        a=fingerprint:sha-384 71:8C:A8:A7:22:B2:D4:BE:79:C1:FB:6B:16:73:DB:37:A8:E2:C7:CC:75:F0:1E:C7:4B:6E:3D:41:CF:74:D3:96:D4:AE:E1:79:65:C5:41:7E:DC:A8:AF:E4:CF:84:12:9B\r
        a=fingerprint:sha-512 35:A4:2B:4C:0B:E6:D1:B2:D5:CC:66:D7:FD:3D:94:01:7A:F1:5F:39:71:3E:60:BA:82:30:65:C3:93:28:B0:81:30:09:F8:2E:17:EE:0C:FE:B1:00:38:8B:45:17:94:41:CF:C9:E9:FB:1A:07:3E:42:2B:CF:B0:BC:37:47:DF:E5\r
        a=setup:actpass\r
        m=video 52871 UDP/TLS/RTP/SAVPF 97 98 99 100 101 102\r
        c=IN IP4 127.0.0.1\r
        a=sendrecv\r
        a=extmap:1 urn:ietf:params:rtp-hdrext:sdes:mid\r
        a=extmap:3 http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time\r
        a=mid:1\r
        a=msid:8e562973-9599-44fa-a79c-445f749a742b 1edff53f-0605-4fcd-a716-10843730abec\r
        a=rtcp:9 IN IP4 0.0.0.0\r
        a=rtcp-mux\r
        a=ssrc-group:FID 1532690481 150968017\r
        a=ssrc:1532690481 cname:04e31703-e451-4e27-8dc0-4b0f469be249\r
        a=ssrc:150968017 cname:04e31703-e451-4e27-8dc0-4b0f469be249\r
        a=rtpmap:97 VP8/90000\r
        a=rtcp-fb:97 nack\r
        a=rtcp-fb:97 nack pli\r
        a=rtcp-fb:97 goog-remb\r
        a=rtpmap:98 rtx/90000\r
        a=fmtp:98 apt=97\r
        a=rtpmap:99 H264/90000\r
        a=rtcp-fb:99 nack\r
        a=rtcp-fb:99 nack pli\r
        a=rtcp-fb:99 goog-remb\r
        a=fmtp:99 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42001f\r
        a=rtpmap:100 rtx/90000\r
        a=fmtp:100 apt=99\r
        a=rtpmap:101 H264/90000\r
        a=rtcp-fb:101 nack\r
        a=rtcp-fb:101 nack pli\r
        a=rtcp-fb:101 goog-remb\r
        a=fmtp:101 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f\r
        a=rtpmap:102 rtx/90000\r
        a=fmtp:102 apt=101\r
        a=candidate:16572de626da4e5384a0ce2d0d93678a 1 udp 2130706431 127.0.0.1 52871 typ host\r
        a=end-of-candidates\r
        a=ice-ufrag:gI7B\r
        a=ice-pwd:j6OIrWFntvVFGEb8C1YMfe\r
        a=fingerprint:sha-256 3A:20:9D:83:96:B2:47:18:AF:EE:0D:73:50:BA:21:AE:55:13:AD:54:56:E1:22:B3:CE:A5:B5:81:59:08:33:EC\r
        a=fingerprint:sha-384 71:8C:A8:A7:22:B2:D4:BE:79:C1:FB:6B:16:73:DB:37:A8:E2:C7:CC:75:F0:1E:C7:4B:6E:3D:41:CF:74:D3:96:D4:AE:E1:79:65:C5:41:7E:DC:A8:AF:E4:CF:84:12:9B\r
        a=fingerprint:sha-512 35:A4:2B:4C:0B:E6:D1:B2:D5:CC:66:D7:FD:3D:94:01:7A:F1:5F:39:71:3E:60:BA:82:30:65:C3:93:28:B0:81:30:09:F8:2E:17:EE:0C:FE:B1:00:38:8B:45:17:94:41:CF:C9:E9:FB:1A:07:3E:42:2B:CF:B0:BC:37:47:DF:E5\r
        a=setup:actpass\r

        """

    func negotiate(_ offer: String, identity: WebRTCIdentity? = identity) throws -> Negotiation {
        try JoinNegotiator.negotiate(
            offer: offer, address: "192.0.2.7", port: 7882, sessionID: 42, audioOnly: false, sendsRoomView: true,
            webRTC: identity)
    }

    @Test func obsWHIPOfferIsAnsweredIceLitePassiveWithH264AndOpusInOneBundle() throws {
        let n = try negotiate(Self.obs)
        let webRTC = try #require(n.webRTC)
        #expect(webRTC.remoteUfrag == "hTUD" && webRTC.remotePassword == "0dYMNSh0Qzd4VUYXY0YLZP")
        #expect(webRTC.dtlsServer)
        #expect(webRTC.fingerprint.algorithm == "sha-256" && webRTC.fingerprint.digest.first == 0x7D)
        #expect(n.audio?.ssrc == 3_005_566_185 && n.audio?.codec == "opus")
        #expect(n.video?.ssrc == 3_005_566_186 && n.video?.codec == "H264")
        // sendonly: nothing goes back.
        #expect(n.returnAudio == nil && n.returnVideo == nil)
        let expected = """
            v=0\r
            o=- 42 1 IN IP4 192.0.2.7\r
            s=Cohost\r
            c=IN IP4 192.0.2.7\r
            t=0 0\r
            a=ice-lite\r
            a=group:BUNDLE 0 1\r
            a=msid-semantic: WMS cohost-42\r
            m=audio 7882 UDP/TLS/RTP/SAVPF 111\r
            a=mid:0\r
            a=ice-ufrag:\(webRTC.localUfrag)\r
            a=ice-pwd:\(webRTC.localPassword)\r
            a=fingerprint:\(Self.identity.fingerprint)\r
            a=setup:passive\r
            a=candidate:1 1 udp 2130706431 192.0.2.7 7882 typ host\r
            a=end-of-candidates\r
            a=rtpmap:111 opus/48000/2\r
            a=fmtp:111 minptime=10;maxaveragebitrate=96000;stereo=1;sprop-stereo=1;useinbandfec=1\r
            a=rtcp-mux\r
            a=rtcp-rsize\r
            a=recvonly\r
            m=video 7882 UDP/TLS/RTP/SAVPF 96\r
            a=mid:1\r
            a=ice-ufrag:\(webRTC.localUfrag)\r
            a=ice-pwd:\(webRTC.localPassword)\r
            a=fingerprint:\(Self.identity.fingerprint)\r
            a=setup:passive\r
            a=candidate:1 1 udp 2130706431 192.0.2.7 7882 typ host\r
            a=end-of-candidates\r
            a=rtpmap:96 H264/90000\r
            a=fmtp:96 profile-level-id=42e01f;packetization-mode=1;level-asymmetry-allowed=1\r
            a=rtcp-fb:96 nack\r
            a=rtcp-fb:96 nack pli\r
            a=rtcp-fb:96 goog-remb\r
            a=rtcp-mux\r
            a=rtcp-rsize\r
            a=recvonly\r

            """
        #expect(n.answer == expected)
    }

    @Test func aiortcOfferGetsVP8WithRTXTheMIDExtensionAndBothWaysBack() throws {
        let n = try negotiate(Self.aiortc)
        let webRTC = try #require(n.webRTC)
        // The first of three fingerprints is the one checked.
        #expect(webRTC.fingerprint.algorithm == "sha-256")
        #expect(webRTC.midExtension == 1 && webRTC.midKinds == ["0": .audio, "1": .video])
        #expect(n.audio?.ssrc == 689973908 && n.video?.ssrc == 1532690481)
        #expect(n.video?.codec == "VP8" && n.video?.retransmission?.ssrc == 150968017)
        #expect(n.returnAudio != nil && n.returnVideo != nil)
        #expect(n.answer.contains("a=extmap:1 urn:ietf:params:rtp-hdrext:sdes:mid\r\n"))
        #expect(n.answer.contains("a=rtpmap:98 rtx/90000\r\na=fmtp:98 apt=97\r\n"))
        #expect(n.answer.contains("a=rtcp-fb:97 goog-remb\r\n"))
        #expect(n.answer.contains("a=msid:cohost-42 audio\r\na=ssrc:\(n.returnAudio!.ssrc) cname:cohost-42\r\n"))
        #expect(!n.answer.contains("a=crypto"))
    }

    /// Chromium's offer for getUserMedia audio and video, sendrecv (Tests/Fixtures/chromium-offer.sdp).
    static var chromium: String {
        get throws {
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            return try String(contentsOf: root.appendingPathComponent("Fixtures/chromium-offer.sdp"), encoding: .utf8)
        }
    }

    @Test func chromiumsOfferGetsOpusAndVP8WithRTXREMBAndTheMIDExtension() throws {
        let n = try negotiate(try Self.chromium)
        let webRTC = try #require(n.webRTC)
        #expect(webRTC.remoteUfrag == "SmhJ" && webRTC.dtlsServer && webRTC.midExtension == 4)
        #expect(n.audio?.ssrc == 2_346_024_115 && n.audio?.codec == "opus")
        #expect(n.video?.codec == "VP8" && n.video?.payloadType == 96 && n.video?.retransmission?.payloadType == 97)
        #expect(n.returnAudio != nil && n.returnVideo?.codec == "VP8")
        let answer = n.answer
        #expect(
            answer.hasPrefix(
                "v=0\r\no=- 42 1 IN IP4 192.0.2.7\r\ns=Cohost\r\nc=IN IP4 192.0.2.7\r\nt=0 0\r\na=ice-lite\r\na=group:BUNDLE 0 1\r\n"
            ))
        #expect(answer.contains("m=audio 7882 UDP/TLS/RTP/SAVPF 111\r\n"))
        #expect(answer.contains("m=video 7882 UDP/TLS/RTP/SAVPF 96 97\r\n"))
        for feedback in ["nack", "nack pli", "ccm fir", "goog-remb"] {
            #expect(answer.contains("a=rtcp-fb:96 \(feedback)\r\n"))
        }
        // transport-cc is not answered: Cohost sends no transport-wide feedback, so Chrome adapts to REMB.
        #expect(!answer.contains("transport-cc"))
        #expect(answer.components(separatedBy: "a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:mid\r\n").count == 3)
        #expect(answer.components(separatedBy: "a=candidate:1 1 udp 2130706431 192.0.2.7 7882 typ host\r\n").count == 3)
        #expect(
            answer.contains("a=sendrecv\r\na=msid:cohost-42 video\r\na=ssrc:\(n.returnVideo!.ssrc) cname:cohost-42\r\n")
        )
    }

    @Test func eachPublicAddressIsAHostCandidateIPv4First() throws {
        let both = WebRTCIdentity(fingerprint: Self.identity.fingerprint, addresses: ["192.0.2.7", "2001:db8::7"])
        let answer = try negotiate(Self.obs, identity: both).answer
        #expect(
            answer.contains(
                "a=candidate:1 1 udp 2130706431 192.0.2.7 7882 typ host\r\n"
                    + "a=candidate:2 1 udp 2130706175 2001:db8::7 7882 typ host\r\na=end-of-candidates\r\n"))
    }

    @Test func aPassiveOfferMakesCohostTheDTLSClient() throws {
        let n = try negotiate(Self.obs.replacingOccurrences(of: "a=setup:actpass", with: "a=setup:passive"))
        #expect(n.webRTC?.dtlsServer == false)
        #expect(n.answer.contains("a=setup:active\r\n"))
    }

    @Test func withoutACertificateAWebRTCOfferIsRefusedAsAnUnsupportedTransport() {
        #expect {
            try negotiate(Self.obs, identity: nil)
        } throws: { ($0 as? RoomError)?.kind == .unsupported && ($0 as? RoomError)?.code == "unsupported_transport" }
    }

    @Test func refusals() {
        let cases: [(String, String)] = [
            (Self.obs.replacingOccurrences(of: "a=fingerprint:", with: "a=x-fingerprint:"), "a=fingerprint"),
            (Self.obs.replacingOccurrences(of: "a=ice-pwd:", with: "a=x-ice-pwd:"), "a=ice-pwd"),
            (Self.obs.replacingOccurrences(of: "a=setup:actpass", with: "a=setup:holdconn"), "holdconn"),
            // SHA-1 fingerprints are too weak to bind the DTLS certificate.
            (
                Self.obs.replacingOccurrences(of: "a=fingerprint:sha-256 ", with: "a=fingerprint:sha-1 "),
                "a=fingerprint uses sha-1; Cohost checks sha-256, sha-384 or sha-512"
            ),
            (
                Self.obs.replacingOccurrences(of: "m=video 61876 UDP/TLS/RTP/SAVPF", with: "m=video 61876 RTP/AVP"),
                "cannot be mixed"
            ),
            (Self.obs.replacingOccurrences(of: "UDP/TLS/RTP/SAVPF", with: "TCP/TLS/RTP/SAVPF"), "over UDP"),
            (
                Self.obs.replacingOccurrences(of: "a=ssrc:3005566186 cname:Xr5rH1aeK9hJFz2d\r\n", with: "")
                    .replacingOccurrences(
                        of: "a=ssrc:3005566186 msid:q1aZ8VbRm3Y0dL6w q1aZ8VbRm3Y0dL6w-video\r\n", with: ""
                    )
                    .replacingOccurrences(
                        of: "a=mid:1\r\n",
                        with: "a=mid:1\r\na=rid:hi send\r\na=rid:lo send\r\na=simulcast:send hi;lo\r\n"),
                "simulcast"
            ),
        ]
        for (offer, phrase) in cases {
            #expect {
                try negotiate(offer)
            } throws: { error in
                guard let error = error as? RoomError else { return false }
                return error.message.contains(phrase)
            }
        }
    }

    @Test func iceCredentialsAreFreshPerAnswerAndMadeOfIceChars() throws {
        let a = try #require(try negotiate(Self.obs).webRTC)
        let b = try #require(try negotiate(Self.obs).webRTC)
        #expect(a.localUfrag != b.localUfrag && a.localPassword != b.localPassword)
        #expect(a.localUfrag.count == 8 && a.localPassword.count == 24)
        let iceChars = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        #expect((a.localUfrag + a.localPassword).allSatisfy(iceChars.contains))
    }
}
