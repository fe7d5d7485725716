import Testing
@testable import RTP

/// RFC 9143's bundle-only lines (GStreamer's webrtcbin with max-bundle offers every line but the first so) and the
/// passive ICE-TCP candidates (RFC 6544) of an answer.
@Suite struct BundleOnlyAndTCPCandidateTests {
    static func offer(group: String, videoPort: Int, bundleOnly: Bool) -> String {
        """
        v=0\r
        o=- 1 0 IN IP4 0.0.0.0\r
        s=-\r
        t=0 0\r
        \(group)m=audio 9 UDP/TLS/RTP/SAVPF 111\r
        a=mid:audio0\r
        a=rtpmap:111 OPUS/48000/2\r
        m=video \(videoPort) UDP/TLS/RTP/SAVPF 96\r
        \(bundleOnly ? "a=bundle-only\r\n" : "")a=mid:video1\r
        a=rtpmap:96 VP8/90000\r

        """
    }

    @Test func aBundleOnlyLineInTheGroupIsLiveOnTheTaggedLinesPort() throws {
        let parsed = try SessionDescription.parse(
            Self.offer(group: "a=group:BUNDLE audio0 video1\r\n", videoPort: 0, bundleOnly: true))
        #expect(parsed.media.map(\.port) == [9, 9])
        #expect(parsed.media.map(\.bundleOnly) == [false, true])
    }

    @Test func aPortZeroLineIsStillDisabledOutsideAGroupOrWithoutTheAttribute() throws {
        let ungrouped = try SessionDescription.parse(Self.offer(group: "", videoPort: 0, bundleOnly: true))
        #expect(ungrouped.media.map(\.port) == [9, 0])
        let plain = try SessionDescription.parse(
            Self.offer(group: "a=group:BUNDLE audio0 video1\r\n", videoPort: 0, bundleOnly: false))
        #expect(plain.media.map(\.port) == [9, 0])
        // The group's tagged (first) line rejected: nothing carries the bundle, nothing is made live.
        let taggedOff = try SessionDescription.parse(
            Self.offer(group: "a=group:BUNDLE video1 audio0\r\n", videoPort: 0, bundleOnly: true))
        #expect(taggedOff.media.map(\.port) == [9, 0])
    }

    @Test func passiveTCPCandidatesFollowTheUDPOnesAtALowerPriority() {
        let transport = AnswerTransport(
            iceUfrag: "u", icePassword: "p", fingerprint: "f", setup: "passive",
            candidates: [("198.51.100.7", 7882), ("2001:db8::7", 7882)], tcpPort: 7882)
        #expect(
            transport.candidateLines == [
                "candidate:1 1 udp 2130706431 198.51.100.7 7882 typ host",
                "candidate:2 1 udp 2130706175 2001:db8::7 7882 typ host",
                "candidate:3 1 tcp 2124414975 198.51.100.7 7882 typ host tcptype passive",
                "candidate:4 1 tcp 2124414719 2001:db8::7 7882 typ host tcptype passive",
            ])
        let udpOnly = AnswerTransport(
            iceUfrag: "u", icePassword: "p", fingerprint: "f", setup: "passive", candidates: [("198.51.100.7", 7882)])
        #expect(udpOnly.candidateLines == ["candidate:1 1 udp 2130706431 198.51.100.7 7882 typ host"])
    }
}
