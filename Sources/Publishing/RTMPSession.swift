import CRTMP
import Foundation

/// An I/O failure of an output (librtmp, socket or file) with its explanation.
struct OutputIOError: Error, CustomStringConvertible {
    let description: String
    /// True when retrying cannot help (the server refused the application, librtmp cannot parse the
    /// URL): the output goes to the final `error` state instead of reconnecting.
    var isFinal = false
    /// What only the operator's log is told (why a destination was refused); the state says `description`.
    var detail: String? = nil
}

/// One publishing connection: the owner of an `RTMP*` handle and the URL copy librtmp points into.
///
/// `@unchecked Sendable`: created, used and freed on its publisher's worker thread only.
final class RTMPSession: PublishingConnection, @unchecked Sendable {
    /// Seconds a connect handshake read or a blocked write may take before the connection counts as lost.
    static let ioTimeoutSeconds: Int32 = 5
    /// Unsent bytes the kernel may hold for us (TCP_NOTSENT_LOWAT): 128 ms at 2 Mbit/s.
    static let unsentLimitBytes = 32 * 1024
    /// The whole connect → createStream → publish exchange must finish within this.
    static let publishHandshakeSeconds = 10.0
    /// The chunk size we publish with, announced after `publish` is accepted: what ffmpeg (echoing nginx-rtmp's
    /// usual setting) and OBS use, so every server takes it; a 2 Mbit/s stream is then ~60 writes a second,
    /// not the ~2000 of the protocol's default 128.
    static let outChunkSize: UInt32 = 4096

    private let rtmp: UnsafeMutablePointer<RTMP>
    /// `RTMP_SetupURL` keeps pointers into this string; freed after `RTMP_Free`.
    private let urlCopy: UnsafeMutablePointer<CChar>
    /// The resolved numeric host librtmp connects to; same lifetime as `urlCopy`.
    private let hostCopy: UnsafeMutablePointer<CChar>?
    /// Reused for every serialised tag and message (hot path: one tag per frame): the chunk header room
    /// librtmp writes into, then the body.
    private var buffer: [UInt8] = []
    /// Chunk streams that carried a message on this connection: later ones send timestamp deltas.
    private var audioChannelOpen = false
    private var videoChannelOpen = false
    /// The chunk streams of the media (as ffmpeg numbers them): audio and data share one, video has its own,
    /// so each is monotonic on its own even when pictures are sent ahead of their sound.
    static let audioChannel: Int32 = 4
    static let videoChannel: Int32 = 6

    /// librtmp's one-time TLS/global setup inside `RTMP_Init` is not thread-safe; serialise handle creation.
    private static let setupLock = NSLock()

    private init(
        rtmp: UnsafeMutablePointer<RTMP>, urlCopy: UnsafeMutablePointer<CChar>, hostCopy: UnsafeMutablePointer<CChar>?
    ) {
        self.rtmp = rtmp
        self.urlCopy = urlCopy
        self.hostCopy = hostCopy
        buffer.reserveCapacity(64 * 1024)
    }

    deinit {
        RTMP_Close(rtmp)
        RTMP_Free(rtmp)
        free(urlCopy)
        if let hostCopy { free(hostCopy) }
    }

    /// Connects and issues `publish`. Blocks (DNS, TCP connect, handshake): call on the worker thread.
    static func connect(url: String, destinations: DestinationPolicy) throws(OutputIOError) -> RTMPSession {
        librtmpProcessSetup()
        guard let urlCopy = strdup(url) else { throw OutputIOError(description: "out of memory") }
        setupLock.lock()
        guard let rtmp = RTMP_Alloc() else {
            setupLock.unlock()
            free(urlCopy)
            throw OutputIOError(description: "RTMP_Alloc failed")
        }
        RTMP_Init(rtmp)
        let parsed = RTMP_SetupURL(rtmp, urlCopy) != 0
        setupLock.unlock()
        guard parsed else {
            RTMP_Free(rtmp)
            free(urlCopy)
            throw OutputIOError(description: "librtmp could not parse the URL", isFinal: true)
        }
        // Without this the server treats us as a player and silently drops everything we send.
        RTMP_EnableWrite(rtmp)
        cohost_rtmp_set_timeout(rtmp, ioTimeoutSeconds)

        let hostName = String(
            decoding: UnsafeRawBufferPointer(
                start: cohost_rtmp_host(rtmp),
                count: Int(max(0, cohost_rtmp_host_length(rtmp)))),
            as: UTF8.self)
        let port = Int(cohost_rtmp_port(rtmp))
        let hostCopy: UnsafeMutablePointer<CChar>?
        do {
            hostCopy = try resolvedHostCopy(hostName)
        } catch {
            RTMP_Free(rtmp)
            free(urlCopy)
            // Whether a name resolves is network knowledge too: told only for hosts the operator listed.
            guard destinations.allows(host: hostName) else {
                throw OutputIOError(description: "cannot connect to \(hostName):\(port)")
            }
            throw error
        }
        if let hostCopy { cohost_rtmp_set_host(rtmp, hostCopy) }
        // From here on the session owns everything and frees it in deinit.
        let session = RTMPSession(rtmp: rtmp, urlCopy: urlCopy, hostCopy: hostCopy)
        // The address librtmp will connect to, checked here (not before the lookup): a name cannot resolve into a
        // refused network between the check and the connect.
        let connectTo = hostCopy.map { String(cString: $0) } ?? hostName
        // Refused like an unreachable host, so that an output's state maps no network for whoever chose its URL.
        if let refusal = destinations.refusal(host: hostName, addresses: IPAddress(connectTo).map { [$0] } ?? []) {
            throw OutputIOError(description: "cannot connect to \(hostName):\(port)", detail: refusal)
        }

        errno = 0
        guard RTMP_Connect(rtmp, nil) != 0 else {
            // Outside an operator's allow-list, the reason (refused, timed out, unreachable) would map the network
            // for whoever chose the URL: it is not told.
            let reason = destinations.allows(host: hostName) ? errnoSuffix() : ""
            throw OutputIOError(description: "cannot connect to \(hostName):\(port)\(reason)")
        }
        try session.awaitPublishStart(url: url, server: "\(hostName):\(port)")
        guard cohost_rtmp_set_out_chunk_size(rtmp, outChunkSize) != 0 else {
            throw OutputIOError(
                description: "sending the chunk size to \(hostName):\(port) failed\(session.failureSuffix())")
        }
        // librtmp only bounds reads; a stalled peer would otherwise block writes forever.
        var timeout = timeval(tv_sec: Int(ioTimeoutSeconds), tv_usec: 0)
        _ = setsockopt(RTMP_Socket(rtmp), SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        // Keep the backlog in our queue, where the drop policy and the adaptive bitrate can see it: with
        // send-buffer autotuning the kernel would otherwise take megabytes (tens of seconds on a slow link)
        // before a write blocks. Unlike a small SO_SNDBUF this does not cap the data in flight on long links.
        var lowWater = Int32(unsentLimitBytes)
        _ = setsockopt(
            RTMP_Socket(rtmp), Int32(IPPROTO_TCP), TCP_NOTSENT_LOWAT, &lowWater, socklen_t(MemoryLayout<Int32>.size))
        return session
    }

    var socket: Int32 { RTMP_Socket(rtmp) }

    /// The size librtmp cuts our messages into (`outChunkSize` once connected).
    var chunkSize: Int { Int(cohost_rtmp_out_chunk_size(rtmp)) }

    /// Writes one tag: onMetaData as a whole serialised FLV tag through `RTMP_Write` (which adds
    /// `@setDataFrame`, the form servers keep as stream metadata); audio, video and other script tags (voice
    /// levels, as plain data messages) as messages on their kind's chunk stream.
    func write(_ tag: FLVTag) throws(OutputIOError) {
        guard tag.isMetadata else { return try sendMessage(tag) }
        buffer.removeAll(keepingCapacity: true)
        tag.appendSerialized(to: &buffer)
        let written = buffer.withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { RTMP_Write(rtmp, $0.baseAddress, Int32($0.count)) }
        }
        guard written > 0 else {
            throw OutputIOError(description: "RTMP_Write failed\(failureSuffix())")
        }
    }

    /// Sends a tag's body as one RTMP message on its chunk stream; the first message of each stream carries
    /// its absolute timestamp, later ones the delta (RTMP_SendPacket keeps the previous one per stream).
    private func sendMessage(_ tag: FLVTag) throws(OutputIOError) {
        let video = tag.kind == .video
        let absolute = !(video ? videoChannelOpen : audioChannelOpen)
        let room = Int(cohost_rtmp_header_room())
        buffer.removeAll(keepingCapacity: true)
        buffer.append(contentsOf: repeatElement(0, count: room))
        buffer.append(contentsOf: tag.body)
        let ok = buffer.withUnsafeMutableBufferPointer { storage in
            storage.withMemoryRebound(to: CChar.self) {
                cohost_rtmp_send_message(
                    rtmp, tag.kind.rawValue, video ? Self.videoChannel : Self.audioChannel,
                    absolute ? 1 : 0, $0.baseAddress, UInt32(tag.body.count), tag.timestampMs)
            }
        }
        guard ok != 0 else {
            throw OutputIOError(description: "sending a \(tag.kind) message failed\(failureSuffix())")
        }
        if video { videoChannelOpen = true } else { audioChannelOpen = true }
    }

    /// Handles whatever the server has sent (pings, acknowledgements, status) without blocking when
    /// there is nothing; throws when the server closed the connection.
    func serviceIncoming() throws(OutputIOError) {
        let fd = RTMP_Socket(rtmp)
        guard fd >= 0 else { throw OutputIOError(description: "connection closed") }
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        // A few packets at most per call, so a chatty server cannot starve our writes.
        for _ in 0..<4 {
            guard poll(&descriptor, 1, 0) > 0 else { return }
            if descriptor.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 && descriptor.revents & Int16(POLLIN) == 0
            {
                throw OutputIOError(description: "connection closed by the server")
            }
            guard cohost_rtmp_read_one(rtmp) != 0 else {
                throw OutputIOError(description: "connection closed by the server")
            }
        }
    }

    /// `RTMP_ConnectStream`'s loop, plus what it does not tell: whether the server ever answered our
    /// `connect`, and the status it sent when it refused. nginx-rtmp closes the connection on an unknown
    /// application without a word, and librtmp wipes its pending-call table when the socket closes, so
    /// the table is read before each packet. A refused or unanswered connect is final (the application
    /// does not exist there); a publish refused after the connect was accepted is not (a stale session
    /// of ours may still hold the stream name for a while).
    private func awaitPublishStart(url: String, server: String) throws(OutputIOError) {
        let deadline = Date().addingTimeInterval(Self.publishHandshakeSeconds)
        let app = OutputURL.rtmpApplication(url)
        while rtmp.pointee.m_bPlaying == 0 {
            let connectPending = hasPendingCall("connect")
            guard Date() < deadline else {
                throw OutputIOError(
                    description:
                        "\(server) did not answer the RTMP \(connectPending ? "connect" : "publish") within \(Int(Self.publishHandshakeSeconds)) s"
                )
            }
            let (open, refusal) = readHandshakePacket()
            if let refusal {
                if connectPending {
                    throw OutputIOError(
                        description: "\(server) refused the RTMP connect to application '\(app)': \(refusal)",
                        isFinal: true)
                }
                throw OutputIOError(
                    description:
                        "\(server) accepted application '\(app)' but refused to publish \(redactedURL(url)): \(refusal)"
                )
            }
            guard open || rtmp.pointee.m_bPlaying != 0 else {
                if connectPending {
                    throw OutputIOError(
                        description:
                            "\(server) refused the RTMP connect to application '\(app)' (no such application on the server?); check the URL",
                        isFinal: true)
                }
                throw OutputIOError(
                    description:
                        "\(server) accepted application '\(app)' but refused to publish \(redactedURL(url)) (stream key rejected, or the name is still being published)"
                )
            }
        }
    }

    /// Reads one chunk and lets librtmp act on a complete message, as `RTMP_ConnectStream` does.
    /// Returns whether the connection is still open, and the server's refusal ("code (description)")
    /// when the message was an `onStatus` or `_error` command at level "error" (nginx-rtmp answers a
    /// name already being published with NetStream.Publish.BadName and keeps the connection open).
    private func readHandshakePacket() -> (open: Bool, refusal: String?) {
        var packet = RTMPPacket()
        guard RTMP_ReadPacket(rtmp, &packet) != 0 else { return (false, nil) }
        // RTMPPacket_IsReady is a macro; an incomplete message stays with librtmp's channel state.
        guard packet.m_nBytesRead == packet.m_nBodySize else { return (RTMP_IsConnected(rtmp) != 0, nil) }
        var refusal: String?
        if packet.m_packetType == UInt8(RTMP_PACKET_TYPE_INVOKE), let body = packet.m_body,
            packet.m_nBodySize > 0, packet.m_nBodySize <= 64 * 1024
        {
            let bytes = Array(UnsafeRawBufferPointer(start: body, count: Int(packet.m_nBodySize)))
            refusal = Self.refusal(inCommand: bytes)
        }
        RTMP_ClientPacket(rtmp, &packet)
        RTMPPacket_Free(&packet)
        return (RTMP_IsConnected(rtmp) != 0, refusal)
    }

    /// "code (description)" of an `onStatus` or `_error` command whose info object has level "error".
    /// The bytes come from the server: a body that does not decode is simply not a refusal.
    static func refusal(inCommand body: [UInt8]) -> String? {
        guard let values = try? decodeAMF0(body), case .string(let name)? = values.first,
            name == "onStatus" || name == "_error"
        else { return nil }
        for case .object(let properties) in values.dropFirst() {
            func text(_ key: String) -> String? {
                guard case .string(let value)? = properties.first(where: { $0.name == key })?.value else { return nil }
                return value
            }
            guard text("level") == "error" else { continue }
            let code = printable(text("code") ?? name)
            return text("description").map { "\(code) (\(printable($0)))" } ?? code
        }
        return nil
    }

    /// Server text bound for logs and events: printable characters only, at most 200 of them.
    private static func printable(_ text: String) -> String {
        String(
            String.UnicodeScalarView(text.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.prefix(200)))
    }

    /// Whether librtmp still waits for the `_result` of a call named `name`.
    private func hasPendingCall(_ name: String) -> Bool {
        guard let calls = rtmp.pointee.m_methodCalls else { return false }
        for i in 0..<Int(max(0, rtmp.pointee.m_numCalls)) {
            let value = calls[i].name
            guard let text = value.av_val, value.av_len > 0 else { continue }
            let bytes = UnsafeRawBufferPointer(start: text, count: Int(value.av_len))
            if bytes.elementsEqual(name.utf8) { return true }
        }
        return false
    }

    /// Why a write failed. librtmp closes the socket on the first failed send (a reset, or a write blocked past
    /// SO_SNDTIMEO) and then tries to send its goodbye on it, so errno ends up "Bad file descriptor" from that
    /// teardown, not the cause: a socket librtmp has closed is reported as a broken connection instead.
    private func failureSuffix() -> String {
        RTMP_Socket(rtmp) < 0
            ? ": the connection broke (reset or closed by the server, or no progress for \(Self.ioTimeoutSeconds) s)"
            : Self.errnoSuffix()
    }

    private static func errnoSuffix() -> String {
        let code = errno
        return code == 0 ? "" : ": \(String(cString: strerror(code)))"
    }

    /// Resolves a host name with the thread-safe `getaddrinfo` (librtmp would use `gethostbyname`).
    /// Nil for numeric IPv4 hosts, which librtmp handles without a lookup.
    private static func resolvedHostCopy(_ host: String) throws(OutputIOError) -> UnsafeMutablePointer<CChar>? {
        if IPAddress(host)?.isIPv4 == true { return nil }
        let first: IPAddress
        // librtmp connects over IPv4 sockets only.
        do { first = try HostResolver.addresses(of: host, ipv4Only: true)[0] } catch {
            throw OutputIOError(description: error.message)
        }
        guard let copy = strdup(first.description) else { throw OutputIOError(description: "out of memory") }
        return copy
    }
}

/// Process-wide librtmp setup, run once: quiet logging (its callback cannot reach our logger) and
/// SIGPIPE ignored so a dropped connection surfaces as a write error instead of killing the process.
private let librtmpSetupOnce: Void = {
    RTMP_LogSetLevel(RTMP_LOGCRIT)
    signal(SIGPIPE, SIG_IGN)
}()

func librtmpProcessSetup() { _ = librtmpSetupOnce }
