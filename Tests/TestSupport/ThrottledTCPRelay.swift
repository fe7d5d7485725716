import Foundation

/// A TCP relay on loopback between a client (an RTMP publisher) and a server: it limits the
/// client→server throughput to `bytesPerSecond` (changeable while running; 0 stalls the link, nil
/// lifts the limit) and can keep a copy of every byte the client sent, per connection.
///
/// The relay only reads from the client as fast as the limit allows, and its receive buffer is
/// small, so back-pressure reaches the client's socket instead of piling up in the relay. Each
/// accepted connection is paired with a fresh connection to `targetPort`; when that connect fails
/// (server down) the client's connection is closed at once. When either side closes, both do.
///
/// `@unchecked Sendable`: mutable state (limit, counters, connections) is guarded by `lock`; each
/// connection's sockets are used by its two pump threads and shut down (never closed) by others.
public final class ThrottledTCPRelay: @unchecked Sendable {
    /// The relay's listening port on 127.0.0.1.
    public let port: Int
    public let targetPort: Int
    /// Keeps a copy of the client→server bytes of every connection (see `captures`).
    public let capturing: Bool

    /// Requested receive buffer of accepted sockets (the kernel doubles it): small, so the relay
    /// itself buffers little more than the limit lets through.
    static let receiveBufferBytes: Int32 = 8 * 1024

    private let listener: Int32
    private let lock = NSLock()
    private var limit: Int?
    private var stallAfter: Int?
    private var running = true
    private var connections: [Connection] = []
    private var _refused = 0
    private var acceptThreadDone = false

    /// - Parameters:
    ///   - targetPort: the server on 127.0.0.1 to forward to.
    ///   - bytesPerSecond: the client→server limit; nil for none, 0 to stall.
    ///   - capture: keep the client→server bytes of each connection.
    public init(targetPort: Int, bytesPerSecond: Int? = nil, capture: Bool = false) throws {
        self.targetPort = targetPort
        capturing = capture
        limit = bytesPerSecond
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestSupportError.system("socket", errno) }
        var yes: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        // Set before listen: accepted sockets inherit it, and the window scale is fixed at the handshake.
        var size = Self.receiveBufferBytes
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        var address = loopbackAddress(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            let code = errno
            close(fd)
            throw TestSupportError.system("bind/listen", code)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "throttled-relay-accept"
        thread.start()
    }

    /// The accept and pump threads keep the relay alive: always call `stop()` (a `defer` after creating it).
    deinit { stop() }

    /// The client→server limit in bytes per second: nil = none, 0 = the relay stops reading.
    public var bytesPerSecond: Int? {
        get { lock.withLock { limit } }
        set { lock.withLock { limit = newValue } }
    }

    /// When set, each connection stops reading from its client once it has forwarded this many bytes:
    /// a destination that takes the handshake and the first messages, then hangs. Stalling from the
    /// start of a connection keeps the client's kernel send buffer at its small initial size (it only
    /// grows while data is being acknowledged), so the client's writes block within a second or two.
    public var stallAfterBytes: Int? {
        get { lock.withLock { stallAfter } }
        set { lock.withLock { stallAfter = newValue } }
    }

    /// Connections accepted and paired with the server so far.
    public var connectionCount: Int { lock.withLock { connections.count } }
    /// Connections accepted while the server refused (closed at once).
    public var refusedCount: Int { lock.withLock { _refused } }
    /// Bytes forwarded client→server over all connections.
    public var forwardedBytes: Int { lock.withLock { connections.reduce(0) { $0 + $1.forwarded } } }
    /// The client→server bytes of each paired connection, in accept order (empty unless `capture`).
    public var capturedStreams: [[UInt8]] { lock.withLock { connections.map { $0.capture.bytes } } }
    /// The same with the arrival time of every read, to tell when each message reached the relay.
    public var captures: [RelayCapture] { lock.withLock { connections.map(\.capture) } }

    /// rtmp://127.0.0.1:port/app/stream through the relay.
    public func rtmpURL(app: String = "live", stream: String) -> String { "rtmp://127.0.0.1:\(port)/\(app)/\(stream)" }

    /// Stops accepting and cuts every connection. Idempotent.
    public func stop() {
        let open: [Connection] = lock.withLock {
            guard running else { return [] }
            running = false
            return connections
        }
        for connection in open { connection.cut() }
        // The accept thread polls with a short timeout; close the listener once it has left.
        for _ in 0..<50 where !lock.withLock({ acceptThreadDone }) { usleep(10_000) }
        if lock.withLock({ acceptThreadDone }) { close(listener) }
    }

    private var isRunning: Bool { lock.withLock { running } }

    private func acceptLoop() {
        defer { lock.withLock { acceptThreadDone = true } }
        while isRunning {
            var descriptor = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 50) > 0 else { continue }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            guard let upstream = connectToTarget() else {
                lock.withLock { _refused += 1 }
                close(client)
                continue
            }
            let connection = Connection(client: client, upstream: upstream, captures: capturing)
            let accepted: Bool = lock.withLock {
                guard running else { return false }
                connections.append(connection)
                return true
            }
            guard accepted else {
                connection.cut()
                connection.release()
                connection.release()
                return
            }
            let up = Thread { [self] in
                pumpClientToServer(connection)
                connection.release()
            }
            up.name = "throttled-relay-up"
            let down = Thread { [self] in
                pumpServerToClient(connection)
                connection.release()
            }
            down.name = "throttled-relay-down"
            up.start()
            down.start()
        }
    }

    private func connectToTarget() -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = loopbackAddress(port: targetPort)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(fd)
            return nil
        }
        return fd
    }

    /// Client → server, through a token bucket refilled at the current limit (burst: 50 ms worth).
    private func pumpClientToServer(_ c: Connection) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)  // reused for every read
        var tokens = 0.0
        var last = monotonicSeconds()
        while isRunning && !c.isCut {
            let now = monotonicSeconds()
            let rate = bytesPerSecond
            let elapsed = now - last
            last = now
            var allowance = buffer.count
            if let stall = stallAfterBytes {
                guard c.forwarded < stall else {
                    usleep(20_000)
                    continue
                }
                allowance = min(allowance, stall - c.forwarded)
            }
            if let rate {
                guard rate > 0 else {
                    tokens = 0
                    usleep(20_000)
                    continue
                }
                // Reads of at least `chunk` bytes (or the whole burst when smaller), so a low limit
                // does not turn into thousands of tiny reads per second.
                let burst = max(1024, Double(rate) * 0.05)
                let chunk = min(burst, 1024)
                tokens = min(burst, tokens + Double(rate) * elapsed)
                guard tokens >= chunk else {
                    usleep(UInt32(min(20_000, max(1_000, (chunk - tokens) / Double(rate) * 1_000_000))))
                    continue
                }
                allowance = min(allowance, Int(tokens))
            }
            var descriptor = pollfd(fd: c.client, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 20) > 0 else { continue }
            let n = buffer.withUnsafeMutableBytes { recv(c.client, $0.baseAddress, allowance, 0) }
            guard n > 0 else { break }
            if rate != nil { tokens -= Double(n) }
            guard writeAll(c.upstream, buffer, count: n) else { break }
            c.forwardedBytes(buffer, count: n)
        }
        c.cut()
    }

    /// Server → client, unlimited (RTMP control replies).
    private func pumpServerToClient(_ c: Connection) {
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)  // reused for every read
        while isRunning && !c.isCut {
            var descriptor = pollfd(fd: c.upstream, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 50) > 0 else { continue }
            let n = buffer.withUnsafeMutableBytes { recv(c.upstream, $0.baseAddress, $0.count, 0) }
            guard n > 0, writeAll(c.client, buffer, count: n) else { break }
        }
        c.cut()
    }

    private func writeAll(_ fd: Int32, _ buffer: [UInt8], count: Int) -> Bool {
        var offset = 0
        while offset < count {
            let n = buffer.withUnsafeBytes { send(fd, $0.baseAddress! + offset, count - offset, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            offset += n
        }
        return true
    }

    /// One client connection and its server connection. The sockets are closed by whichever of the
    /// two pump threads releases last, so a socket number is never reused while a pump still polls it.
    final class Connection: @unchecked Sendable {  // mutable state guarded by lock
        let client: Int32
        let upstream: Int32
        private let captures: Bool
        private let lock = NSLock()
        private var cutDone = false
        private var references = 2
        private var captured: [UInt8] = []
        private var reads: [RelayCapture.Read] = []
        private var forwardedCount = 0

        init(client: Int32, upstream: Int32, captures: Bool) {
            self.client = client
            self.upstream = upstream
            self.captures = captures
        }

        var isCut: Bool { lock.withLock { cutDone } }
        var capture: RelayCapture { lock.withLock { RelayCapture(bytes: captured, reads: reads) } }
        var forwarded: Int { lock.withLock { forwardedCount } }

        func forwardedBytes(_ buffer: [UInt8], count: Int) {
            let now = monotonicSeconds()
            lock.withLock {
                forwardedCount += count
                guard captures else { return }
                captured.append(contentsOf: buffer[0..<count])
                reads.append(RelayCapture.Read(end: captured.count, seconds: now))
            }
        }

        /// Shuts both sockets down (wakes any blocked call); closing is left to `release`.
        func cut() {
            lock.withLock {
                guard !cutDone else { return }
                cutDone = true
                _ = shutdown(client, Int32(SHUT_RDWR))
                _ = shutdown(upstream, Int32(SHUT_RDWR))
            }
        }

        func release() {
            let last: Bool = lock.withLock {
                references -= 1
                return references == 0
            }
            if last {
                close(client)
                close(upstream)
            }
        }
    }
}

/// What a relay forwarded client→server on one connection: the bytes, and when each read arrived.
public struct RelayCapture: Sendable {
    /// One read: the capture's length after it, and when it arrived (monotonic seconds).
    public struct Read: Sendable {
        public let end: Int
        public let seconds: Double
    }

    public let bytes: [UInt8]
    public let reads: [Read]

    /// When the byte at `offset` reached the relay (monotonic seconds); nil past the end.
    public func arrivalSeconds(ofByteAt offset: Int) -> Double? {
        var low = 0, high = reads.count
        while low < high {  // first read whose end is past `offset`
            let mid = (low + high) / 2
            if reads[mid].end > offset { high = mid } else { low = mid + 1 }
        }
        return low < reads.count ? reads[low].seconds : nil
    }
}

private func loopbackAddress(port: Int) -> sockaddr_in { Loopback.address(port: port) }

func monotonicSeconds() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
}
