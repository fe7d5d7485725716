import Codecs
import Foundation
import Media
import RTP
import SRTP

/// A conference participant for tests: sends a tone as Opus RTP every 20 ms from one UDP socket on 127.0.0.1 and
/// receives what Cohost sends back on the same socket (symmetric RTP), decrypting SRTP when it offered it and
/// decoding the return audio with libopus. Once a second it sends a receiver report about each stream it
/// receives, echoing the last sender report (so Cohost can time the round trip).
public final class ConferenceClient: @unchecked Sendable {
    public let audioSSRC: UInt32
    public let toneHz: Double
    public let stereo: Bool
    public let secure: Bool
    public var localPort: Int { Loopback.localPort(fd) ?? 0 }

    private let fd: Int32
    private let serverPort: Int
    private let lock = NSLock()
    private var offerKey: [UInt8]?
    private var outbound: SRTPSession?
    private var inbound: SRTPSession?
    /// The video line's own key (each line of the answer has one), and the SSRC Cohost announced on it.
    private var inboundVideo: SRTPSession?
    private var announcedVideoSSRC: UInt32?
    private var threads: [Thread] = []
    private var running = false
    private var muted = false
    /// False after offering `recvonly`: only receiver reports go out.
    private var sendsMedia = true
    private var beepPattern: (periodMs: Int, lengthMs: Int)?
    private var onsets: [Int64] = []
    private var videoSource:
        (width: Int, height: Int, fps: Int, kbps: Int, draw: @Sendable (inout VideoFrame, Int64) -> Void)?
    private var amplitude: Float
    /// Decoded return audio (mono), with silence where DTX or loss left gaps, and when each packet arrived.
    private var received: [Float] = []
    private var stream: (ssrc: UInt32, nextTimestamp: UInt32, highest: UInt32, packets: Int)?
    private var arrivals: [(timestamp: UInt32, ms: Int64, payloadBytes: Int, marker: Bool, pcmOffset: Int)] = []
    private var lastSR: (middle: UInt32, atMs: Int64)?
    private var senderReports = 0
    private var undecodable = 0
    private let decoder: OpusDecoder
    /// The room view, when the offer has a video line: its codec, depacketizer, decoder and what it decoded.
    public enum VideoCodec: String, Sendable { case vp8 = "VP8", h264 = "H264" }
    private var videoCodec: VideoCodec?
    private var view: ViewState?
    private struct ViewState {
        var vp8 = VP8Depacketizer()
        var h264 = H264Depacketizer()
        var vp8Decoder: VP8Decoder?
        var h264Decoder: H264Decoder?
        var picture = VideoFrame(width: 2, height: 2)
        var frames = 0
        var keyframes = 0
        var ssrc: UInt32?
        var lastSequence: UInt16?
        var packets = 0
        var highestSequence: UInt16 = 0
        /// Each decoded frame: its RTP timestamp and when its last packet arrived (monotonic ms).
        var decoded: [(timestamp: UInt32, ms: Int64)] = []
        var onFrame: (@Sendable (VideoFrame, Int64) -> Void)?
    }

    /// `toneHz` 0 sends silence. `secure`: offers RTP/SAVP with a key of its own.
    public init(
        serverPort: Int, audioSSRC: UInt32, toneHz: Double, amplitude: Float = 0.3, stereo: Bool = false,
        secure: Bool = false
    ) throws {
        self.serverPort = serverPort
        self.audioSSRC = audioSSRC
        self.toneHz = toneHz
        self.amplitude = amplitude
        self.stereo = stereo
        self.secure = secure
        decoder = try OpusDecoder(channels: 1)
        fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0, Loopback.bind(fd, port: 0) else { throw ClientError("could not bind a UDP socket") }
        var timeout = timeval(tv_sec: 0, tv_usec: 50_000)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        if secure { offerKey = SDES.randomKey(profile: .aesCm128HmacSha1_80) }
    }

    deinit {
        stop()
        close(fd)
    }

    public struct ClientError: Error, CustomStringConvertible {
        public let description: String
        public init(_ d: String) { description = d }
    }

    /// The join offer: one Opus line, `direction` as given; with `video`, a `recvonly` video line in that codec
    /// (its RTCP comes from `audioSSRC + 1`).
    public func offer(
        direction: String = "sendrecv", video: VideoCodec? = nil, videoDirection: String = "recvonly"
    )
        -> String
    {
        lock.withLock {
            sendsMedia = direction != "recvonly"
            videoCodec = video
            if video != nil && videoDirection != "sendonly" { view = ViewState() }
        }
        var lines = audioOffer(direction: direction)
        if let video {
            let pt = video == .vp8 ? 96 : 102
            lines += "m=video 9 \(secure ? "RTP/SAVP" : "RTP/AVP") \(pt)\r\n"
            lines += video == .vp8 ? "a=rtpmap:96 VP8/90000\r\n" : "a=rtpmap:102 H264/90000\r\n"
            if video == .h264 {
                lines += "a=fmtp:102 profile-level-id=42e01f;packetization-mode=1;level-asymmetry-allowed=1\r\n"
            }
            lines += "a=rtcp-fb:\(pt) nack\r\na=rtcp-fb:\(pt) nack pli\r\na=rtcp-fb:\(pt) goog-remb\r\n"
            if let offerKey { lines += "a=crypto:1 AES_CM_128_HMAC_SHA1_80 \(SDES.inlineKey(offerKey))\r\n" }
            let ssrc = videoDirection == "recvonly" ? audioSSRC &+ 1 : audioSSRC &+ 2
            lines += "a=ssrc:\(ssrc)\r\na=\(videoDirection)\r\n"
        }
        return lines
    }

    private func audioOffer(direction: String) -> String {
        var sdp = "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
        sdp += "m=audio 9 \(secure ? "RTP/SAVP" : "RTP/AVP") 111\r\na=rtpmap:111 opus/48000/2\r\n"
        if stereo { sdp += "a=fmtp:111 stereo=1; useinbandfec=1\r\n" }
        if let offerKey { sdp += "a=crypto:1 AES_CM_128_HMAC_SHA1_80 \(SDES.inlineKey(offerKey))\r\n" }
        sdp += "a=ssrc:\(audioSSRC)\r\na=\(direction)\r\n"
        return sdp
    }

    /// Takes the answer: Cohost's key for what it sends (SRTP), and the SSRC it announced.
    @discardableResult
    public func accept(answer: String) throws -> UInt32? {
        let sdp = try SessionDescription.parse(answer)
        guard let audio = sdp.media.first(where: { $0.kind == .audio }) else { throw ClientError("no audio line") }
        if let offerKey {
            guard let crypto = audio.cryptos.first else { throw ClientError("no a=crypto in the answer") }
            let key = try SDES.parseInlineKey(crypto.keyParams, profile: .aesCm128HmacSha1_80)
            lock.withLock {
                outbound = try? SRTPSession(
                    profile: .aesCm128HmacSha1_80, masterKeyAndSalt: offerKey, direction: .outbound)
                inbound = try? SRTPSession(profile: .aesCm128HmacSha1_80, masterKeyAndSalt: key, direction: .inbound)
            }
        }
        if let video = sdp.media.first(where: { $0.kind == .video && $0.port != 0 }) {
            announcedVideoSSRC = video.ssrcs.first
            if offerKey != nil, let crypto = video.cryptos.first {
                let key = try SDES.parseInlineKey(crypto.keyParams, profile: .aesCm128HmacSha1_80)
                lock.withLock {
                    inboundVideo = try? SRTPSession(
                        profile: .aesCm128HmacSha1_80, masterKeyAndSalt: key, direction: .inbound)
                }
            }
        }
        return audio.ssrcs.first
    }

    public func setMuted(_ on: Bool) { lock.withLock { muted = on } }

    /// Sends the tone only `lengthMs` of every `periodMs` (beeps starting on a packet boundary); `beepOnsets` then
    /// holds when each beep's first packet was sent (monotonic ms).
    public func beep(periodMs: Int, lengthMs: Int) { lock.withLock { beepPattern = (periodMs, lengthMs) } }
    public var beepOnsets: [Int64] { lock.withLock { onsets } }

    /// Sends VP8 video (on SSRC `audioSSRC + 2`, payload type 96, the offer's `sendonly` or `sendrecv` video line)
    /// once started: `draw` paints each frame, given its capture time (monotonic ms).
    public func sendVideo(
        width: Int, height: Int, fps: Int, bitrateKbps: Int,
        draw: @escaping @Sendable (inout VideoFrame, Int64) -> Void
    ) {
        lock.withLock { videoSource = (width, height, fps, bitrateKbps, draw) }
    }

    /// Starts sending the tone and receiving.
    public func start() {
        lock.withLock { running = true }
        let sender = Thread { [weak self] in self?.sendLoop() }
        let receiver = Thread { [weak self] in self?.receiveLoop() }
        threads = [sender, receiver]
        if lock.withLock({ videoSource != nil }) { threads.append(Thread { [weak self] in self?.videoLoop() }) }
        threads.forEach { $0.start() }
    }

    public func stop() {
        lock.withLock { running = false }
        while threads.contains(where: { !$0.isFinished }) { usleep(5_000) }
        threads = []
    }

    /// The room view's last decoded picture, frames decoded and keyframes among them, and packets received.
    public var roomView: (picture: VideoFrame, frames: Int, keyframes: Int, packets: Int) {
        lock.withLock {
            (
                view?.picture ?? VideoFrame(width: 2, height: 2), view?.frames ?? 0, view?.keyframes ?? 0,
                view?.packets ?? 0
            )
        }
    }

    /// Each decoded room view frame: its RTP timestamp and when its last packet arrived (monotonic ms).
    public var viewFrames: [(timestamp: UInt32, ms: Int64)] { lock.withLock { view?.decoded ?? [] } }

    /// Called with each decoded room view frame and its arrival (monotonic ms), on the receive thread.
    public func onViewFrame(_ body: @escaping @Sendable (VideoFrame, Int64) -> Void) {
        lock.withLock { view?.onFrame = body }
    }

    /// Sends a PLI about the room view.
    public func requestKeyframe() {
        guard let media = lock.withLock({ view?.ssrc }) else { return }
        sendRTCP(PictureLossIndication(senderSSRC: audioSSRC &+ 1, mediaSSRC: media).serialized())
    }

    /// Sends a generic NACK for room view packets `numbers`.
    public func sendNack(_ numbers: [UInt16]) {
        guard let media = lock.withLock({ view?.ssrc }) else { return }
        sendRTCP(GenericNACK(senderSSRC: audioSSRC &+ 1, mediaSSRC: media, lostSequenceNumbers: numbers).serialized())
    }

    /// Sends a REMB of `bitrate` bit/s about the room view.
    public func sendREMB(_ bitrate: UInt64) {
        guard let media = lock.withLock({ view?.ssrc }) else { return }
        sendRTCP(
            ReceiverEstimatedMaximumBitrate(senderSSRC: audioSSRC &+ 1, bitrate: bitrate, ssrcs: [media]).serialized())
    }

    /// The room view's newest sequence number received.
    public var viewHighestSequence: UInt16? { lock.withLock { view?.lastSequence } }

    /// The last `seconds` of decoded return audio (mono, 48 kHz).
    public func receivedAudio(lastSeconds seconds: Double) -> [Float] {
        lock.withLock { Array(received.suffix(Int(seconds * 48_000))) }
    }

    /// Return audio packets received, sender reports received, and packets that did not decrypt or decode.
    public var counts: (packets: Int, senderReports: Int, undecodable: Int, ssrc: UInt32?) {
        lock.withLock { (stream?.packets ?? 0, senderReports, undecodable, stream?.ssrc) }
    }

    /// Each return packet: its RTP timestamp, when it arrived (monotonic ms), its payload size and marker bit, and
    /// where its decoded samples start in the received audio (counted from the first, not the last 10 s).
    public var packetArrivals: [(timestamp: UInt32, ms: Int64, payloadBytes: Int, marker: Bool, pcmOffset: Int)] {
        lock.withLock { arrivals }
    }

    /// All decoded return audio since the start (mono, 48 kHz).
    public var allReceivedAudio: [Float] { lock.withLock { received } }

    /// The tone's level in `samples` (dBFS of a sine's peak): 10·log10(4·Goertzel power).
    public static func toneLevel(_ samples: [Float], hz: Double) -> Double {
        10 * log10(max(4 * Goertzel.power(samples: samples, sampleRate: 48_000, frequency: hz), 1e-12))
    }

    // MARK: loops

    private func sendLoop() {
        guard let encoder = try? OpusEncoder(channels: 1, bitrate: 32_000) else { return }
        var sequence = UInt16.random(in: 0...UInt16.max)
        var timestamp = UInt32.random(in: 0...UInt32.max)
        var phase = 0.0
        var pcm = [Float](repeating: 0, count: 960)
        let start = Self.nowMs()
        var block: Int64 = 0
        var lastReport: Int64 = 0
        while lock.withLock({ running }) {
            let (quiet, level, sending) = lock.withLock { (muted || toneHz == 0, amplitude, sendsMedia) }
            var silent = quiet
            var onset = false
            if let pattern = lock.withLock({ beepPattern }) {
                let at = Int(block * 20) % pattern.periodMs
                silent = silent || at >= pattern.lengthMs
                onset = !silent && at == 0
                if onset { phase = 0 }
            }
            for i in 0..<960 {
                pcm[i] = silent ? 0 : level * Float(sin(phase))
                phase += 2 * Double.pi * toneHz / 48_000
            }
            phase = phase.truncatingRemainder(dividingBy: 2 * Double.pi)
            if sending, let payload = try? encoder.encode(pcm) {
                let packet = RTPPacket(
                    payloadType: 111, sequenceNumber: sequence, timestamp: timestamp, ssrc: audioSSRC,
                    payload: payload
                ).serialized()
                send(protectRTP(packet))
                if onset {
                    let sentAt = Self.nowMs()
                    lock.withLock { onsets.append(sentAt) }
                }
            }
            sequence &+= 1
            timestamp &+= 960
            block += 1
            let now = Self.nowMs()
            if now - lastReport >= 1000 {
                lastReport = now
                sendReceiverReport(nowMs: now)
            }
            let due = start + block * 20
            if due > now { usleep(UInt32((due - now) * 1000)) }
        }
    }

    private func videoLoop() {
        guard let source = lock.withLock({ videoSource }),
            let encoder = try? VP8Encoder(
                width: source.width, height: source.height, fps: source.fps, bitrateKbps: source.kbps)
        else { return }
        var packetizer = VP8Packetizer(maxPayloadSize: 1100)
        var frame = VideoFrame(width: source.width, height: source.height)
        var sequence = UInt16.random(in: 0...UInt16.max)
        let ssrc = audioSSRC &+ 2
        let start = Self.nowMs()
        var n: Int64 = 0
        while lock.withLock({ running }) {
            let captured = Self.nowMs()
            source.draw(&frame, captured)
            let timestamp = UInt32(truncatingIfNeeded: captured &* 90)
            var packets: [[UInt8]] = []
            try? encoder.encode(frame, pts: n, forceKeyframe: n % Int64(source.fps * 2) == 0) { data, _, _ in
                packetizer.packetize(data) { d, piece, last in
                    packets.append(
                        RTPPacket(
                            marker: last, payloadType: 96, sequenceNumber: sequence, timestamp: timestamp, ssrc: ssrc,
                            payload: [d.0, d.1, d.2, d.3] + Array(piece)
                        ).serialized())
                    sequence &+= 1
                }
            }
            for packet in packets { send(packet) }
            n += 1
            let due = start + n * 1000 / Int64(source.fps)
            let now = Self.nowMs()
            if due > now { usleep(UInt32((due - now) * 1000)) }
        }
    }

    private func receiveLoop() {
        var buffer = [UInt8](repeating: 0, count: 2048)
        while lock.withLock({ running }) {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { continue }
            handle(Array(buffer[0..<n]), nowMs: Self.nowMs())
        }
    }

    private func handle(_ datagram: [UInt8], nowMs: Int64) {
        guard datagram.count >= 8 else { return }
        let isRTCP = (192...223).contains(datagram[1])
        lock.lock()
        defer { lock.unlock() }
        var clear = datagram
        let at = isRTCP ? 4 : 8
        let ssrc = datagram.count >= at + 4 ? datagram[at..<(at + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } : 0
        let session = ssrc == announcedVideoSSRC && inboundVideo != nil ? inboundVideo : inbound
        if let session {
            do {
                clear = isRTCP ? try session.unprotectRTCP(datagram) : try session.unprotectRTP(datagram)
            } catch {
                undecodable += 1
                return
            }
        }
        if isRTCP {
            guard let packets = try? parseCompoundRTCP(clear) else { return }
            for case .senderReport(let sr) in packets {
                senderReports += 1
                lastSR = (UInt32(truncatingIfNeeded: sr.ntpTimestamp >> 16), nowMs)
            }
            return
        }
        guard let packet = try? RTPPacket(bytes: clear) else { return }
        if packet.payloadType == 96 || packet.payloadType == 102 {
            receiveView(packet, nowMs: nowMs)
            return
        }
        var state = stream ?? (packet.ssrc, packet.timestamp, packet.timestamp, 0)
        let gap = Int(Int32(bitPattern: packet.timestamp &- state.nextTimestamp))
        if gap > 0 && gap <= 48_000 * 5 { received.append(contentsOf: repeatElement(0, count: gap)) }
        arrivals.append((packet.timestamp, nowMs, packet.payload.count, packet.marker, received.count))
        var pcm: [Float] = []
        do {
            let frames = try decoder.decode(packet.payload, into: &pcm)
            received.append(contentsOf: pcm.prefix(frames))
            state.nextTimestamp = packet.timestamp &+ UInt32(frames)
        } catch {
            undecodable += 1
        }
        if Int32(bitPattern: packet.timestamp &- state.highest) > 0 { state.highest = packet.timestamp }
        state.packets += 1
        stream = state
    }

    /// Under `lock`.
    private func receiveView(_ packet: RTPPacket, nowMs: Int64) {
        guard var state = view, let codec = videoCodec else { return }
        defer { view = state }
        state.packets += 1
        state.ssrc = packet.ssrc
        let afterLoss = state.lastSequence.map { packet.sequenceNumber != $0 &+ 1 } ?? false
        if let last = state.lastSequence, Int16(bitPattern: packet.sequenceNumber &- last) <= 0 { return }
        state.lastSequence = packet.sequenceNumber
        var frames: [EncodedFrame] = []
        switch codec {
        case .vp8:
            if let f = state.vp8.push(packet, afterLoss: afterLoss) { frames.append(f) }
            if let f = state.vp8.takeReadyFrame() { frames.append(f) }
        case .h264:
            if let f = state.h264.push(packet, afterLoss: afterLoss) { frames.append(f) }
            if let f = state.h264.takeReadyFrame() { frames.append(f) }
        }
        for frame in frames {
            do {
                let decoded: Bool
                switch codec {
                case .vp8:
                    if state.vp8Decoder == nil { state.vp8Decoder = try VP8Decoder() }
                    decoded = try state.vp8Decoder!.decode(frame.data, into: &state.picture)
                case .h264:
                    if state.h264Decoder == nil { state.h264Decoder = try H264Decoder() }
                    decoded = try state.h264Decoder!.decode(frame.data, into: &state.picture)
                }
                guard decoded else { continue }
                state.frames += 1
                if frame.isKeyframe { state.keyframes += 1 }
                state.decoded.append((frame.rtpTimestamp, nowMs))
                state.onFrame?(state.picture, nowMs)
            } catch {
                undecodable += 1
            }
        }
    }

    private func sendRTCP(_ compound: [UInt8]) {
        let wire = lock.withLock { outbound.flatMap { try? $0.protectRTCP(compound) } } ?? (secure ? nil : compound)
        if let wire { send(wire) }
    }

    private func sendReceiverReport(nowMs: Int64) {
        let report: [UInt8] = lock.withLock {
            guard let stream else { return ReceiverReport(ssrc: audioSSRC).serialized() }
            let (lsr, dlsr): (UInt32, UInt32) =
                lastSR.map { ($0.middle, UInt32((nowMs - $0.atMs) * 65_536 / 1000)) } ?? (0, 0)
            let block = ReceptionReport(
                ssrc: stream.ssrc, fractionLost: 0, totalLost: 0, extendedHighestSequence: UInt32(stream.packets),
                jitter: 0, lastSenderReport: lsr, delaySinceLastSenderReport: dlsr)
            return ReceiverReport(ssrc: audioSSRC, reports: [block]).serialized()
        }
        sendRTCP(report)
    }

    private func protectRTP(_ packet: [UInt8]) -> [UInt8] {
        lock.withLock { outbound.flatMap { try? $0.protectRTP(packet) } } ?? packet
    }

    private func send(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { payload in
            Loopback.withSockaddr(port: serverPort) { sendto(fd, payload.baseAddress, payload.count, 0, $0, $1) }
        }
    }

    /// CLOCK_MONOTONIC in ms: the clock a frame's capture time (`sendVideo`) is taken from.
    public static func nowMs() -> Int64 {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Int64(t.tv_sec) * 1000 + Int64(t.tv_nsec) / 1_000_000
    }
}
