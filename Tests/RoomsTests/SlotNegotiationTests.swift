import Forwarding
import TestSupport
import Testing
@testable import Rooms

/// Receive slots in the offer (protocol/sdp.md, "Receive slots"): recvonly video lines beyond the room view's.
@Suite struct SlotNegotiationTests {
    static let head = "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
    static let camera = "m=video 9 RTP/AVP 96\r\na=mid:cam\r\na=rtpmap:96 VP8/90000\r\na=ssrc:2001\r\na=sendrecv\r\n"

    static func slot(_ mid: String, formats: String = "96 102 104", extra: String = "") -> String {
        "m=video 9 RTP/AVP \(formats)\r\na=mid:\(mid)\r\na=rtpmap:96 VP8/90000\r\na=rtcp-fb:96 nack pli\r\n"
            + "a=rtpmap:102 H264/90000\r\na=fmtp:102 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f\r\n"
            + "a=rtpmap:104 H264/90000\r\na=fmtp:104 packetization-mode=0;profile-level-id=42e01f\r\n" + extra
            + "a=recvonly\r\n"
    }

    func negotiate(_ offer: String, roomView: Bool = true, audioOnly: Bool = false) throws -> Negotiation {
        var random = SplitMix64(seed: 7)
        return try JoinNegotiator.negotiate(
            offer: offer, address: "127.0.0.1", port: 7882, sessionID: 9, audioOnly: audioOnly,
            sendsRoomView: roomView, using: &random)
    }

    @Test func theCameraLineKeepsTheRoomViewAndEachRecvonlyLineIsASlotWithItsForwardableCodecs() throws {
        let n = try negotiate(Self.head + Self.camera + Self.slot("s1") + Self.slot("s2"))
        #expect(n.video?.ssrc == 2001)
        #expect(n.returnVideo != nil)
        #expect(n.slots.map(\.mid) == ["s1", "s2"])
        #expect(n.slots[0].formats.map(\.payloadType) == [96, 102])
        #expect(n.slots[0].formats.map(\.codec) == [.vp8, .h264(profile: 0x42, constrained: true)])
        #expect(n.slots[0].accepts == ["VP8", "H264/42c"])
        #expect(Set(n.slots.map(\.ssrc)).count == 2)
        let lines = n.answer.components(separatedBy: "m=video ")
        #expect(lines.count == 4)
        // Mode 0 is not forwarded: the answer carries VP8 and the mode-1 H.264 only.
        #expect(lines[2].hasPrefix("7882 RTP/AVP 96 102\r\n"))
        #expect(lines[2].contains("a=sendonly\r\na=ssrc:\(n.slots[0].ssrc) cname:cohost-9\r\n"))
        #expect(lines[2].contains("a=rtcp-fb:102 nack pli\r\n"))
        #expect(!lines[2].contains("104"))
    }

    @Test func aSlotOfferingNothingForwardableIsRejectedAndExtraSlotsBeyondSixteenToo() throws {
        let vp9 = "m=video 9 RTP/AVP 98\r\na=mid:v9\r\na=rtpmap:98 VP9/90000\r\na=recvonly\r\n"
        let n = try negotiate(Self.head + Self.camera + vp9)
        #expect(n.slots.isEmpty)
        #expect(n.answer.contains("m=video 0 RTP/AVP 98\r\n"))
        let many = (1...17).map { Self.slot("s\($0)") }.joined()
        let crowded = try negotiate(Self.head + Self.camera + many)
        #expect(crowded.slots.count == 16)
        #expect(crowded.answer.hasSuffix("m=video 0 RTP/AVP 96 102 104\r\n"))
    }

    @Test func withoutARoomViewTheFirstRecvonlyLineIsASlotAndAudioOnlyRoomsHaveNone() throws {
        let n = try negotiate(Self.head + Self.slot("s1"), roomView: false)
        #expect(n.returnVideo == nil && n.slots.map(\.mid) == ["s1"])
        let audio = "m=audio 9 RTP/AVP 111\r\na=mid:a\r\na=rtpmap:111 opus/48000/2\r\na=ssrc:3001\r\na=sendrecv\r\n"
        let voice = try negotiate(Self.head + audio + Self.slot("s1"), audioOnly: true)
        #expect(voice.slots.isEmpty)
    }

    @Test func aSlotsReceiverSSRCMayNotRepeatAnotherLines() throws {
        let dup = Self.slot("s1", extra: "a=ssrc:2001\r\n")
        #expect(throws: RoomError.self) { try negotiate(Self.head + Self.camera + dup) }
    }

    @Test func aSlidesLineIsTheScreenShareReceivedButNeverAnsweredWithAStreamBack() throws {
        let screen =
            "m=video 9 RTP/AVP 96\r\na=mid:screen\r\na=content:slides\r\na=rtpmap:96 VP8/90000\r\na=ssrc:2002\r\n"
            + "a=sendrecv\r\n"
        let n = try negotiate(Self.head + Self.camera + screen + Self.slot("s1"))
        #expect(n.video?.ssrc == 2001)
        #expect(n.screen?.ssrc == 2002)
        #expect(n.screen?.codec == "VP8")
        #expect(n.slots.map(\.mid) == ["s1"])
        let lines = n.answer.components(separatedBy: "m=video ")
        #expect(lines[2].contains("a=mid:screen\r\n") && lines[2].contains("a=recvonly\r\n"))
        #expect(!lines[2].contains("a=ssrc:"))
        // The same SSRC on the camera line is refused.
        let clash = screen.replacingOccurrences(of: "a=ssrc:2002", with: "a=ssrc:2001")
        #expect(throws: RoomError.self) { try negotiate(Self.head + Self.camera + clash) }
    }
}
