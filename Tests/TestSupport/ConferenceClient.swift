import Codecs
import Foundation
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
    private var threads: [Thread] = []
    private var running = false
    private var muted = false
    /// False after offering `recvonly`: only receiver reports go out.
    private var sendsMedia = true
    private var amplitude: Float
    /// Decoded return audio (mono), with silence where DTX or loss left gaps, and when each packet arrived.
    private var received: [Float] = []
    private var stream: (ssrc: UInt32, nextTimestamp: UInt32, highest: UInt32, packets: Int)?
    private var arrivals: [(timestamp: UInt32, ms: Int64, payloadBytes: Int, marker: Bool)] = []
    private var lastSR: (middle: UInt32, atMs: Int64)?
    private var senderReports = 0
    private var undecodable = 0
    private let decoder: OpusDecoder

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
        init(_ d: String) { description = d }
    }

    /// The join offer: one Opus line, `direction` as given.
    public func offer(direction: String = "sendrecv") -> String {
        lock.withLock { sendsMedia = direction != "recvonly" }
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
        return audio.ssrcs.first
    }

    public func setMuted(_ on: Bool) { lock.withLock { muted = on } }

    /// Starts sending the tone and receiving.
    public func start() {
        lock.withLock { running = true }
        let sender = Thread { [weak self] in self?.sendLoop() }
        let receiver = Thread { [weak self] in self?.receiveLoop() }
        threads = [sender, receiver]
        sender.start()
        receiver.start()
    }

    public func stop() {
        lock.withLock { running = false }
        while threads.contains(where: { !$0.isFinished }) { usleep(5_000) }
        threads = []
    }

    /// The last `seconds` of decoded return audio (mono, 48 kHz).
    public func receivedAudio(lastSeconds seconds: Double) -> [Float] {
        lock.withLock { Array(received.suffix(Int(seconds * 48_000))) }
    }

    /// Return audio packets received, sender reports received, and packets that did not decrypt or decode.
    public var counts: (packets: Int, senderReports: Int, undecodable: Int, ssrc: UInt32?) {
        lock.withLock { (stream?.packets ?? 0, senderReports, undecodable, stream?.ssrc) }
    }

    /// Each return packet: its RTP timestamp, when it arrived (monotonic ms), its payload size and marker bit.
    public var packetArrivals: [(timestamp: UInt32, ms: Int64, payloadBytes: Int, marker: Bool)] {
        lock.withLock { arrivals }
    }

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
            let (silent, level, sending) = lock.withLock { (muted || toneHz == 0, amplitude, sendsMedia) }
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
        if let inbound {
            do {
                clear = isRTCP ? try inbound.unprotectRTCP(datagram) : try inbound.unprotectRTP(datagram)
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
        arrivals.append((packet.timestamp, nowMs, packet.payload.count, packet.marker))
        var state = stream ?? (packet.ssrc, packet.timestamp, packet.timestamp, 0)
        let gap = Int(Int32(bitPattern: packet.timestamp &- state.nextTimestamp))
        if gap > 0 && gap <= 48_000 * 5 { received.append(contentsOf: repeatElement(0, count: gap)) }
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
        let wire = lock.withLock { outbound.flatMap { try? $0.protectRTCP(report) } } ?? (secure ? nil : report)
        if let wire { send(wire) }
    }

    private func protectRTP(_ packet: [UInt8]) -> [UInt8] {
        lock.withLock { outbound.flatMap { try? $0.protectRTP(packet) } } ?? packet
    }

    private func send(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { payload in
            Loopback.withSockaddr(port: serverPort) { sendto(fd, payload.baseAddress, payload.count, 0, $0, $1) }
        }
    }

    static func nowMs() -> Int64 {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Int64(t.tv_sec) * 1000 + Int64(t.tv_nsec) / 1_000_000
    }
}
