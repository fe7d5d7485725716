import Foundation
import RTP

/// One synthetic participant: its UDP socket (symmetric RTP: it sends from and receives on the same port), its
/// offer, and what the server's answer told it. Counters have one writer each: `sent` belongs to the pacer's thread,
/// `received` to the receiver's; both are read only after those threads stopped.
public final class LoadParticipant: @unchecked Sendable {
    public let room: String
    public let user: String
    public let audioSSRC: UInt32
    public let videoSSRC: UInt32
    public let sendsVideo: Bool
    /// Whether the offer asks for the return path (mix-minus audio, and the room view on a video line).
    public let receives: Bool
    /// Receive slots offered (recvonly video lines): the others' cameras, forwarded.
    public let slots: Int
    /// Cohost's SSRC on each slot, from the answer (written before the receiver thread reads).
    private(set) var slotSSRCs: [UInt32] = []
    let fd: Int32
    /// Where the server receives media, from the answer.
    var server = sockaddr_in()
    public internal(set) var joinMs: Double = 0

    public struct Sent: Sendable {
        public var audioPackets = 0
        public var videoPackets = 0
        public var videoFrames = 0
        public var bytes = 0
        public var errors = 0
    }
    public struct Received: Sendable {
        public var audioPackets = 0
        public var videoPackets = 0
        /// Packets with the marker bit on the video line: the room view's frames.
        public var videoFrames = 0
        /// Packets and bytes that came on the receive slots.
        public var forwardedPackets = 0
        public var forwardedBytes = 0
        public var rtcpPackets = 0
        public var bytes = 0
    }
    public internal(set) var sent = Sent()
    public internal(set) var received = Received()
    /// The answer's payload types for what comes back.
    var returnAudioPT: UInt8 = 111
    var returnVideoPT: UInt8 = 96

    /// Binds a UDP socket on any address, port chosen by the kernel.
    init(room: String, user: String, ssrcBase: UInt32, sendsVideo: Bool, receives: Bool, slots: Int = 0) throws {
        self.slots = slots
        self.room = room
        self.user = user
        audioSSRC = ssrcBase
        videoSSRC = ssrcBase &+ 1
        self.sendsVideo = sendsVideo
        self.receives = receives
        fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw LoadTestError("socket(): \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw LoadTestError("bind(): \(reason)")
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        // Room for a burst of the room view's packets between two polls.
        var size: Int32 = 1 << 20
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { close(fd) }

    /// The join offer: Opus, and VP8 when the participant sends video or receives the room view (protocol/sdp.md).
    public var offer: String {
        let direction = receives ? "sendrecv" : "sendonly"
        var sdp = "v=0\r\no=- \(audioSSRC) 1 IN IP4 0.0.0.0\r\ns=cohost load-test\r\nc=IN IP4 0.0.0.0\r\nt=0 0\r\n"
        sdp += "m=audio 9 RTP/AVP 111\r\na=rtpmap:111 opus/48000/2\r\na=ssrc:\(audioSSRC)\r\na=\(direction)\r\n"
        if sendsVideo {
            sdp += "m=video 9 RTP/AVP 96\r\na=rtpmap:96 VP8/90000\r\na=ssrc:\(videoSSRC)\r\na=\(direction)\r\n"
        }
        for i in 0..<slots {
            sdp += "m=video 9 RTP/AVP 96\r\na=mid:s\(i + 1)\r\na=rtpmap:96 VP8/90000\r\n"
            sdp += "a=rtcp-fb:96 nack pli\r\na=recvonly\r\n"
        }
        return sdp
    }

    /// Reads where to send and what comes back from the answer; `fallbackHost` when it names no usable address.
    func accept(answer: String, fallbackHost: String) throws {
        let description: SessionDescription
        do { description = try SessionDescription.parse(answer) } catch {
            throw LoadTestError("\(user): the answer does not parse: \(error)")
        }
        guard let audio = description.media.first(where: { $0.kind == .audio }), audio.port > 0 else {
            throw LoadTestError("\(user): the answer has no audio line")
        }
        if let pt = audio.payloadTypes.first { returnAudioPT = pt }
        if let video = description.media.first(where: { $0.kind == .video }), let pt = video.payloadTypes.first {
            returnVideoPT = pt
        }
        slotSSRCs = (0..<slots).compactMap { i in
            description.media.first { $0.mid == "s\(i + 1)" && $0.port > 0 }?.ssrcs.first
        }
        var host = Self.connectionAddress(answer) ?? fallbackHost
        if host == "0.0.0.0" || host.isEmpty { host = fallbackHost }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(audio.port).bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            throw LoadTestError("\(user): the media address '\(host)' is not IPv4 (the load tester sends IPv4)")
        }
        server = address
    }

    /// The first `c=IN IP4 <address>` line.
    static func connectionAddress(_ sdp: String) -> String? {
        for line in sdp.split(whereSeparator: \.isNewline) where line.hasPrefix("c=IN IP4 ") {
            return String(line.dropFirst("c=IN IP4 ".count)).trimmingCharacters(in: .whitespaces)
        }
        return nil
    }

    /// Sends one datagram to the server (pacer thread).
    func send(_ bytes: [UInt8]) {
        let n = bytes.withUnsafeBytes { buffer in
            withUnsafePointer(to: &server) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, buffer.baseAddress, buffer.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        if n < 0 { sent.errors += 1 } else { sent.bytes += n }
    }

    /// Counts one datagram from the server (receiver thread): RTCP by its packet type (RFC 5761 §4), RTP by payload
    /// type.
    func count(_ datagram: UnsafeRawBufferPointer) {
        guard datagram.count >= 8, datagram[0] >> 6 == 2 else { return }
        let second = datagram[1]
        if (200...206).contains(second) {
            received.bytes += datagram.count
            received.rtcpPackets += 1
            return
        }
        guard datagram.count >= 12 else { return }
        received.bytes += datagram.count
        if !slotSSRCs.isEmpty {
            let ssrc =
                UInt32(datagram[8]) << 24 | UInt32(datagram[9]) << 16 | UInt32(datagram[10]) << 8
                | UInt32(datagram[11])
            if slotSSRCs.contains(ssrc) {
                received.forwardedPackets += 1
                received.forwardedBytes += datagram.count
                return
            }
        }
        let pt = second & 0x7F
        if pt == returnAudioPT {
            received.audioPackets += 1
        } else if pt == returnVideoPT {
            received.videoPackets += 1
            if second & 0x80 != 0 { received.videoFrames += 1 }
        }
    }
}
