/// Plain RTP/AVP offers as the suites send them: Opus on payload type 111, VP8 on 96 or H.264 on 102
/// (packetization mode 1), each line with the SSRC given.
public enum TestOffer {
    public enum Video: Sendable {
        case vp8(UInt32)
        case h264(UInt32)
    }

    /// `direction` is written on every line; nil leaves it out (the line is then sendrecv).
    public static func plain(audio: UInt32?, video: Video? = nil, direction: String? = "sendonly") -> String {
        var sdp = "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
        let end = direction.map { "a=\($0)\r\n" } ?? ""
        if let audio {
            sdp += "m=audio 9 RTP/AVP 111\r\na=rtpmap:111 opus/48000/2\r\na=ssrc:\(audio)\r\n" + end
        }
        switch video {
        case .vp8(let ssrc)?:
            sdp += "m=video 9 RTP/AVP 96\r\na=rtpmap:96 VP8/90000\r\na=ssrc:\(ssrc)\r\n" + end
        case .h264(let ssrc)?:
            sdp += "m=video 9 RTP/AVP 102\r\na=rtpmap:102 H264/90000\r\na=fmtp:102 packetization-mode=1\r\n"
            sdp += "a=ssrc:\(ssrc)\r\n" + end
        case nil:
            break
        }
        return sdp
    }
}
