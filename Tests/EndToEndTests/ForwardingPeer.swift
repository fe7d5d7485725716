import Codecs
import Foundation
import Media
import RTP
import TestSupport

/// A plain-RTP participant for the forwarding tests: it sends a live VP8 camera (a real libvpx encode of a moving
/// noise picture, keyframes when asked by PLI or FIR) and records what it receives, by SSRC. What it sent is kept
/// by frame payload (after the 4-byte descriptor), so a receiver can tell exactly whose packets it got.
final class ForwardingPeer: @unchecked Sendable {
    struct Received {
        var ssrc: UInt32
        var sequence: UInt16
        var timestamp: UInt32
        var marker: Bool
        var payloadType: UInt8
        var payload: [UInt8]
        var ms: Int64
    }

    let ssrc: UInt32
    let width: Int
    let height: Int
    let bitrateKbps: Int
    private let fd: Int32
    private let serverPort: Int
    private let lock = NSLock()
    private var running = false
    private var sending = true
    private var thread: Thread?
    private var keyframesWanted: Set<UInt32> = []
    private var sentTails: Set<[UInt8]> = []
    private var screenTails: Set<[UInt8]> = []
    /// The screen share's SSRC, when the peer sends one (`a=content:slides`).
    let screenSSRC: UInt32?
    /// The screen share's flat grey.
    static let screenLuma: UInt8 = 200
    /// Simulcast: the camera sent as these layers instead (RIDs named in the first packets of each, as libwebrtc
    /// does), each with what it sent.
    struct Layer {
        var rid: String
        var ssrc: UInt32
        var width: Int
        var height: Int
        var kbps: Int
    }
    let layers: [Layer]
    private var layerTails: [String: Set<[UInt8]>] = [:]
    private var pausedLayers: Set<String> = []
    /// The RID header extension's id in the offer.
    static let ridExtensionID: UInt8 = 10
    private var received: [Received] = []
    private var rtcpIn: [RTCPPacket] = []
    private var sentPackets = 0

    init(
        serverPort: Int, ssrc: UInt32, width: Int = 320, height: Int = 240, bitrateKbps: Int = 400,
        screenSSRC: UInt32? = nil, layers: [Layer] = []
    ) throws {
        self.layers = layers
        self.ssrc = ssrc
        self.screenSSRC = screenSSRC
        self.width = width
        self.height = height
        self.bitrateKbps = bitrateKbps
        self.serverPort = serverPort
        fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0, Loopback.bind(fd, port: 0) else { throw ConferenceClient.ClientError("socket") }
        var timeout = timeval(tv_sec: 0, tv_usec: 5_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    /// A video-only offer: the camera (`a=mid:cam`, sendonly) and `slots` recvonly lines (`a=mid:s1`…), VP8 and
    /// H.264 offered on each.
    func offer(slots: Int) -> String {
        var sdp = "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
        sdp += "m=video 9 RTP/AVP 96\r\na=mid:cam\r\na=rtpmap:96 VP8/90000\r\na=rtcp-fb:96 nack pli\r\n"
        if layers.isEmpty {
            sdp += "a=rtcp-fb:96 goog-remb\r\na=ssrc:\(ssrc)\r\na=sendonly\r\n"
        } else {
            sdp += "a=rtcp-fb:96 goog-remb\r\na=extmap:\(Self.ridExtensionID) \(ridExtensionURI)\r\n"
            for layer in layers { sdp += "a=rid:\(layer.rid) send\r\n" }
            sdp += "a=simulcast:send \(layers.map(\.rid).joined(separator: ";"))\r\na=sendonly\r\n"
        }
        if let screenSSRC {
            sdp += "m=video 9 RTP/AVP 96\r\na=mid:screen\r\na=content:slides\r\na=rtpmap:96 VP8/90000\r\n"
            sdp += "a=rtcp-fb:96 nack pli\r\na=ssrc:\(screenSSRC)\r\na=sendonly\r\n"
        }
        for i in 0..<slots {
            sdp += "m=video 9 RTP/AVP 96 102\r\na=mid:s\(i + 1)\r\na=rtpmap:96 VP8/90000\r\n"
            sdp += "a=rtpmap:102 H264/90000\r\na=fmtp:102 packetization-mode=1;profile-level-id=42e01f\r\n"
            sdp += "a=rtcp-fb:96 nack pli\r\na=rtcp-fb:96 goog-remb\r\na=recvonly\r\n"
        }
        return sdp
    }

    /// The SSRC the answer announces on the line with `mid`.
    static func answerSSRC(_ answer: String, mid: String) throws -> UInt32 {
        let sdp = try SessionDescription.parse(answer)
        guard let line = sdp.media.first(where: { $0.mid == mid }), let ssrc = line.ssrcs.first else {
            throw ConferenceClient.ClientError("no a=ssrc on mid \(mid) in \(answer)")
        }
        return ssrc
    }

    func start() {
        lock.withLock { running = true }
        let t = Thread { [self] in run() }
        t.name = "forwarding-peer-\(ssrc)"
        thread = t
        t.start()
    }

    func stop() {
        lock.withLock { running = false }
        while thread?.isFinished == false { usleep(5_000) }
    }

    func setSending(_ on: Bool) { lock.withLock { sending = on } }

    /// Stops or starts sending one simulcast layer (what a browser does on a `layers` event).
    func setLayer(_ rid: String, active: Bool) {
        lock.withLock {
            if active { pausedLayers.remove(rid) } else { pausedLayers.insert(rid) }
        }
    }

    /// The simulcast layer whose frame piece `payload` carries, if this peer sent it.
    func sentLayer(_ payload: [UInt8]) -> String? {
        guard let tail = Self.tail(payload) else { return nil }
        return lock.withLock { layerTails.first { $0.value.contains(tail) }?.key }
    }

    /// Packets received on `ssrc`, in arrival order.
    func packets(on ssrc: UInt32) -> [Received] { lock.withLock { received.filter { $0.ssrc == ssrc } } }

    /// RTCP the server sent this peer.
    var rtcp: [RTCPPacket] { lock.withLock { rtcpIn } }

    /// Whether `payload` (a VP8 RTP payload) carries a frame piece this peer sent.
    func sent(_ payload: [UInt8]) -> Bool {
        guard let tail = Self.tail(payload) else { return false }
        return lock.withLock { sentTails.contains(tail) }
    }

    /// Whether `payload` carries a piece of this peer's screen share.
    func sentScreen(_ payload: [UInt8]) -> Bool {
        guard let tail = Self.tail(payload) else { return false }
        return lock.withLock { screenTails.contains(tail) }
    }

    var packetsSent: Int { lock.withLock { sentPackets } }

    /// Sends RTCP (already serialized) to the server from this peer's socket.
    func send(rtcp bytes: [UInt8]) { sendDatagram(bytes) }

    // MARK: the thread

    /// One stream this peer sends: the camera (moving noise) or the screen share (a flat grey page).
    private final class Source {
        let ssrc: UInt32
        let screen: Bool
        var rid: String?
        let encoder: VP8Encoder
        var packetizer: VP8Packetizer
        var frame: VideoFrame
        var sequence: UInt16
        var index: Int64 = 0

        init(ssrc: UInt32, screen: Bool, width: Int, height: Int, kbps: Int) throws {
            self.ssrc = ssrc
            self.screen = screen
            encoder = try VP8Encoder(width: width, height: height, fps: 30, bitrateKbps: kbps)
            packetizer = VP8Packetizer(maxPayloadSize: 1200, firstPictureID: UInt16(ssrc & 0x7FFF))
            frame = VideoFrame(width: width, height: height)
            for j in frame.y.indices { frame.y[j] = screen ? ForwardingPeer.screenLuma : 0 }
            sequence = UInt16(truncatingIfNeeded: ssrc)
        }
    }

    private func run() {
        var sources: [Source] = []
        if layers.isEmpty {
            guard let camera = try? Source(ssrc: ssrc, screen: false, width: width, height: height, kbps: bitrateKbps)
            else { return }
            sources.append(camera)
        }
        for layer in layers {
            guard
                let source = try? Source(
                    ssrc: layer.ssrc, screen: false, width: layer.width, height: layer.height, kbps: layer.kbps)
            else { return }
            source.rid = layer.rid
            sources.append(source)
        }
        if let screenSSRC, let screen = try? Source(ssrc: screenSSRC, screen: true, width: 160, height: 96, kbps: 200) {
            sources.append(screen)
        }
        var random = SystemRandomNumberGenerator()
        var buffer = [UInt8](repeating: 0, count: 2048)
        var nextFrameMs = monotonicMs()
        while lock.withLock({ running }) {
            let now = monotonicMs()
            if now >= nextFrameMs {
                nextFrameMs += 33
                if lock.withLock({ sending }) {
                    for source in sources where !lock.withLock({ source.rid.map(pausedLayers.contains) ?? false }) {
                        sendFrame(source, random: &random)
                    }
                }
            }
            let n = recv(fd, &buffer, buffer.count, 0)
            guard n > 0 else { continue }
            let bytes = Array(buffer[0..<n])
            handle(bytes, ms: monotonicMs())
        }
    }

    private func sendFrame(_ source: Source, random: inout SystemRandomNumberGenerator) {
        if source.screen {
            // A page that barely changes: one corner pixel moves, so frames keep coming.
            source.frame.y[Int(source.index % 8)] = UInt8.random(in: 0...255, using: &random)
        } else {
            // Noise the encoder cannot compress away: the stream runs near its bitrate.
            for j in stride(from: 0, to: source.frame.y.count, by: 8) {
                source.frame.y[j] = UInt8.random(in: 0...255, using: &random)
            }
        }
        let key = lock.withLock { keyframesWanted.remove(source.ssrc) != nil || source.index == 0 }
        let timestamp = UInt32(truncatingIfNeeded: source.index * 3000)
        let encoded = (try? source.encoder.encode(source.frame, pts: source.index, forceKeyframe: key)) ?? []
        source.index += 1
        for e in encoded {
            e.data.withUnsafeBytes { data in
                source.packetizer.packetize(data) { d, piece, last in
                    let payload = [d.0, d.1, d.2, d.3] + Array(piece)
                    var packet: [UInt8] = []
                    RTPPacket.write(
                        payloadType: 96, marker: last, sequenceNumber: source.sequence, timestamp: timestamp,
                        ssrc: source.ssrc, payload: payload, into: &packet)
                    // libwebrtc names a layer in its first packets only.
                    if let rid = source.rid, source.index <= 3 { packet = Self.withRid(packet, rid) }
                    source.sequence &+= 1
                    lock.withLock {
                        if let tail = Self.tail(payload) {
                            if let rid = source.rid {
                                layerTails[rid, default: []].insert(tail)
                            } else if source.screen {
                                screenTails.insert(tail)
                            } else {
                                sentTails.insert(tail)
                            }
                        }
                        sentPackets += 1
                    }
                    sendDatagram(packet)
                }
            }
        }
    }

    private func handle(_ bytes: [UInt8], ms: Int64) {
        guard bytes.count >= 8 else { return }
        if (200...206).contains(bytes[1]) {
            guard let packets = try? parseCompoundRTCP(bytes) else { return }
            lock.withLock {
                rtcpIn += packets
                for p in packets {
                    switch p {
                    case .pli(let pli): keyframesWanted.insert(pli.mediaSSRC)
                    case .fir(let fir): for entry in fir.entries { keyframesWanted.insert(entry.ssrc) }
                    default: break
                    }
                }
            }
            return
        }
        guard let packet = try? RTPPacket(bytes: bytes) else { return }
        lock.withLock {
            received.append(
                Received(
                    ssrc: packet.ssrc, sequence: packet.sequenceNumber, timestamp: packet.timestamp,
                    marker: packet.marker,
                    payloadType: packet.payloadType, payload: packet.payload, ms: ms))
        }
    }

    private func sendDatagram(_ bytes: [UInt8]) {
        _ = Loopback.withSockaddr(port: serverPort) { address, length in
            bytes.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, 0, address, length) }
        }
    }

    /// `packet` with a one-byte header extension (RFC 8285) carrying the RID.
    static func withRid(_ packet: [UInt8], _ rid: String) -> [UInt8] {
        var element = [UInt8(ridExtensionID << 4 | UInt8(rid.utf8.count - 1))] + Array(rid.utf8)
        while element.count % 4 != 0 { element.append(0) }
        var out = Array(packet[0..<12])
        out[0] |= 0x10
        out += [0xBE, 0xDE, 0, UInt8(element.count / 4)] + element
        return out + packet[12...]
    }

    /// A VP8 payload without its 4-byte descriptor (the picture id is rewritten on the way).
    static func tail(_ payload: [UInt8]) -> [UInt8]? { payload.count > 4 ? Array(payload[4...]) : nil }
}

private func monotonicMs() -> Int64 {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return Int64(t.tv_sec) * 1000 + Int64(t.tv_nsec) / 1_000_000
}
