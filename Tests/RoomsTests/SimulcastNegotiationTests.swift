import Foundation
import RTP
import TestSupport
import Testing
@testable import Rooms

/// Simulcast offers (protocol/sdp.md, "Simulcast"): RIDs sent, the RID extension, each layer on stand-in SSRCs.
@Suite struct SimulcastNegotiationTests {
    static let head = "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"

    static func camera(_ attributes: String, rtx: Bool = false) -> String {
        "m=video 9 RTP/AVP 96" + (rtx ? " 97" : "") + "\r\na=mid:cam\r\na=rtpmap:96 VP8/90000\r\n"
            + (rtx ? "a=rtpmap:97 rtx/90000\r\na=fmtp:97 apt=96\r\n" : "")
            + "a=extmap:10 urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id\r\n"
            + (rtx ? "a=extmap:11 urn:ietf:params:rtp-hdrext:sdes:repaired-rtp-stream-id\r\n" : "") + attributes
            + "a=sendonly\r\n"
    }

    func negotiate(_ offer: String) throws -> Negotiation {
        var random = SplitMix64(seed: 11)
        return try JoinNegotiator.negotiate(
            offer: offer, address: "127.0.0.1", port: 7882, sessionID: 9, audioOnly: false, using: &random)
    }

    @Test func chromiumsThreeEncodingsBecomeThreeLayersOnStandInSSRCsWithRTX() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("WebRTC/samples/chromium-offer-simulcast.sdp")
        let offer = try String(contentsOf: url, encoding: .utf8)
        var random = SplitMix64(seed: 11)
        let identity = WebRTCIdentity(fingerprint: "sha-256 00", addresses: ["127.0.0.1"])
        let n = try JoinNegotiator.negotiate(
            offer: offer, address: "127.0.0.1", port: 7882, sessionID: 9, audioOnly: false, webRTC: identity,
            using: &random)
        let video = try #require(n.video)
        #expect(video.layers.map(\.rid) == ["q", "h", "f"])
        #expect(video.ridExtension == 10 && video.repairedRidExtension == 11 && video.midExtension == 4)
        #expect(video.mid == "1" && video.learnFromMID == nil)
        #expect(video.ssrc == video.layers[0].ssrc)
        let all = video.layers.flatMap { [$0.ssrc, $0.repairSSRC].compactMap { $0 } }
        #expect(Set(all).count == 6)
        #expect(video.retransmission?.payloadType == 97 && video.retransmission?.ssrc == video.layers[0].repairSSRC)
        #expect(n.answer.contains("a=rid:q recv\r\na=rid:h recv\r\na=rid:f recv\r\na=simulcast:recv q;h;f\r\n"))
    }

    @Test func theSimulcastLineOrdersTheLayersAndAlternativesAndPausedMarksAreRead() throws {
        let n = try negotiate(
            Self.head
                + Self.camera(
                    "a=rid:a send\r\na=rid:b send\r\na=rid:c send\r\na=rid:r recv\r\na=simulcast:send ~c;b,a recv r\r\n"
                ))
        #expect(n.video?.layers.map(\.rid) == ["c", "b"])
        #expect(n.answer.contains("a=simulcast:recv c;b\r\n"))
        #expect(!n.answer.contains("a=rid:a ") && !n.answer.contains("a=rid:r "))
    }

    @Test func withoutASimulcastLineTheSentRidsAreTheLayersAtMostFourWellFormedOnes() throws {
        let rids = ["1", "2", "bad!", "3", "4", "5"].map { "a=rid:\($0) send\r\n" }.joined()
        let n = try negotiate(Self.head + Self.camera(rids))
        #expect(n.video?.layers.map(\.rid) == ["1", "2", "3", "4"])
        #expect(n.video?.layers.allSatisfy { $0.repairSSRC == nil } == true)
        #expect(n.video?.retransmission == nil)
    }

    @Test func ridsWithoutTheRidExtensionAreRefused() {
        let offer =
            Self.head + "m=video 9 RTP/AVP 96\r\na=mid:cam\r\na=rtpmap:96 VP8/90000\r\na=rid:q send\r\n"
            + "a=rid:f send\r\na=simulcast:send q;f\r\na=sendonly\r\n"
        #expect {
            try negotiate(offer)
        } throws: { error in
            (error as? RoomError)?.code == "invalid_sdp"
                && (error as? RoomError)?.message.contains("rtp-stream-id") == true
        }
    }

    @Test func anOfferWithSSRCsIsReceivedAsOneStreamAndAnsweredWithoutRids() throws {
        let n = try negotiate(Self.head + Self.camera("a=rid:q send\r\na=simulcast:send q\r\na=ssrc:4242\r\n"))
        #expect(n.video?.ssrc == 4242 && n.video?.layers.isEmpty == true)
        #expect(!n.answer.contains("a=simulcast"))
    }
}
