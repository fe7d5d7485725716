import CRTMP
import Foundation

/// An I/O failure of an output (librtmp, socket or file) with its explanation.
struct OutputIOError: Error, CustomStringConvertible {
    let description: String
}

/// One publishing connection: the owner of an `RTMP*` handle and the URL copy librtmp points into.
///
/// `@unchecked Sendable`: created, used and freed on its publisher's worker thread only.
final class RTMPSession: @unchecked Sendable {
    /// Seconds a connect handshake read or a blocked write may take before the connection counts as lost.
    static let ioTimeoutSeconds: Int32 = 5

    private let rtmp: UnsafeMutablePointer<RTMP>
    /// `RTMP_SetupURL` keeps pointers into this string; freed after `RTMP_Free`.
    private let urlCopy: UnsafeMutablePointer<CChar>
    /// The resolved numeric host librtmp connects to; same lifetime as `urlCopy`.
    private let hostCopy: UnsafeMutablePointer<CChar>?

    /// librtmp's one-time TLS/global setup inside `RTMP_Init` is not thread-safe; serialise handle creation.
    private static let setupLock = NSLock()

    private init(rtmp: UnsafeMutablePointer<RTMP>, urlCopy: UnsafeMutablePointer<CChar>, hostCopy: UnsafeMutablePointer<CChar>?) {
        self.rtmp = rtmp
        self.urlCopy = urlCopy
        self.hostCopy = hostCopy
    }

    deinit {
        RTMP_Close(rtmp)
        RTMP_Free(rtmp)
        free(urlCopy)
        if let hostCopy { free(hostCopy) }
    }

    /// Connects and issues `publish`. Blocks (DNS, TCP connect, handshake): call on the worker thread.
    static func connect(url: String) throws(OutputIOError) -> RTMPSession {
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
            throw OutputIOError(description: "librtmp could not parse the URL")
        }
        // Without this the server treats us as a player and silently drops everything we send.
        RTMP_EnableWrite(rtmp)
        cohost_rtmp_set_timeout(rtmp, ioTimeoutSeconds)

        let hostName = String(decoding: UnsafeRawBufferPointer(start: cohost_rtmp_host(rtmp),
                                                               count: Int(max(0, cohost_rtmp_host_length(rtmp)))),
                              as: UTF8.self)
        let port = Int(cohost_rtmp_port(rtmp))
        let hostCopy: UnsafeMutablePointer<CChar>?
        do {
            hostCopy = try resolvedHostCopy(hostName)
        } catch {
            RTMP_Free(rtmp)
            free(urlCopy)
            throw error
        }
        if let hostCopy { cohost_rtmp_set_host(rtmp, hostCopy) }
        // From here on the session owns everything and frees it in deinit.
        let session = RTMPSession(rtmp: rtmp, urlCopy: urlCopy, hostCopy: hostCopy)

        errno = 0
        guard RTMP_Connect(rtmp, nil) != 0 else {
            throw OutputIOError(description: "cannot connect to \(hostName):\(port)\(errnoSuffix())")
        }
        guard RTMP_ConnectStream(rtmp, 0) != 0 else {
            throw OutputIOError(description: "\(hostName):\(port) refused the publish (unknown application or stream key?)")
        }
        // librtmp only bounds reads; a stalled peer would otherwise block writes forever.
        var timeout = timeval(tv_sec: Int(ioTimeoutSeconds), tv_usec: 0)
        _ = setsockopt(RTMP_Socket(rtmp), SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return session
    }

    var socket: Int32 { RTMP_Socket(rtmp) }

    /// Writes one whole serialised FLV tag (`RTMP_Write` adds `@setDataFrame` to script tags: use it for onMetaData).
    func write(_ serializedTag: [UInt8]) throws(OutputIOError) {
        let written = serializedTag.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { RTMP_Write(rtmp, $0.baseAddress, Int32($0.count)) }
        }
        guard written > 0 else {
            throw OutputIOError(description: "RTMP_Write failed\(Self.errnoSuffix())")
        }
    }

    /// Sends a script tag's body as a plain data message (no `@setDataFrame`), e.g. voice levels.
    func sendData(body: [UInt8], timestampMs: UInt32) throws(OutputIOError) {
        let ok = body.withUnsafeBufferPointer { cohost_rtmp_send_data(rtmp, $0.baseAddress, UInt32($0.count), timestampMs) }
        guard ok != 0 else { throw OutputIOError(description: "sending a data message failed\(Self.errnoSuffix())") }
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
            if descriptor.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 && descriptor.revents & Int16(POLLIN) == 0 {
                throw OutputIOError(description: "connection closed by the server")
            }
            guard cohost_rtmp_read_one(rtmp) != 0 else {
                throw OutputIOError(description: "connection closed by the server")
            }
        }
    }

    private static func errnoSuffix() -> String {
        let code = errno
        return code == 0 ? "" : ": \(String(cString: strerror(code)))"
    }

    /// Resolves a host name with the thread-safe `getaddrinfo` (librtmp would use `gethostbyname`).
    /// Nil for numeric IPv4 hosts, which librtmp handles without a lookup.
    private static func resolvedHostCopy(_ host: String) throws(OutputIOError) -> UnsafeMutablePointer<CChar>? {
        var probe = in_addr()
        if inet_pton(AF_INET, host, &probe) == 1 { return nil }
        var hints = addrinfo()
        hints.ai_family = AF_INET  // librtmp connects over IPv4 sockets only
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &result)
        defer { if let result { freeaddrinfo(result) } }
        guard status == 0, let first = result, let address = first.pointee.ai_addr else {
            throw OutputIOError(description: "cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
        let ok = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { ipv4 in
            var addr = ipv4.pointee.sin_addr
            return inet_ntop(AF_INET, &addr, &text, socklen_t(text.count)) != nil
        }
        guard ok, let copy = strdup(text) else { throw OutputIOError(description: "cannot resolve \(host)") }
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
