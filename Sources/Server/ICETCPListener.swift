import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Clocks
import ICE
import Logging
import Rooms

/// Passive ICE-TCP (RFC 6544): a listening TCP socket and the connections browsers open to it, each carrying
/// RFC 4571 frames of the same STUN, DTLS, RTP and RTCP the media port carries. A frame goes to the media
/// receiver's sink as a datagram from a `PeerAddress` naming its connection, so the demux, the ICE agents and
/// the transports treat a TCP peer as one more address.
///
/// Concurrency: the connections are read, accepted and closed on the media receive thread only (it polls the
/// descriptors this type hands it); `send` may come from any thread and takes the connection's lock, which
/// `close` takes too, so a descriptor is never written after it is closed.
public final class ICETCPListener: @unchecked Sendable {
    public struct Limits: Sendable {
        /// Connections open at once, and from one remote address.
        public var total = 1024
        public var perAddress = 16
        /// A connection whose checks Cohost never answered is closed after this.
        public var validationMs: Int64 = 5_000
        /// A validated connection that sends nothing for this long is closed (RFC 7675's consent window).
        public var idleMs: Int64 = 30_000
        /// Bytes queued behind a slow reader; a frame that does not fit is dropped whole.
        public var pendingBytes = 512 * 1024

        public init() {}
    }

    public struct Counters: Sendable, Equatable {
        public var open = 0
        public var accepted = 0
        public var frames = 0
        /// Closed: no answered check in time, a first frame that is not STUN, over a limit, by the peer (or an
        /// error), silent too long.
        public var closedTimeout = 0
        public var closedInvalid = 0
        public var closedLimit = 0
        public var closedPeer = 0
        public var closedIdle = 0
        /// Frames not sent: the connection's queue was full.
        public var sendDropped = 0
    }

    /// One accepted connection. `framer`, `frames` and `lastReceiveMs` belong to the receive thread; the rest is
    /// under `lock`.
    final class Connection: @unchecked Sendable {
        let id: UInt32
        let fd: Int32
        let peer: PeerAddress
        let acceptedMs: Int64
        var framer = ICETCPFramer()
        var frames = 0
        var lastReceiveMs: Int64
        let lock = NSLock()
        var pending: [UInt8] = []
        var validated = false
        var closed = false

        init(id: UInt32, fd: Int32, peer: PeerAddress, nowMs: Int64) {
            self.id = id
            self.fd = fd
            self.peer = peer
            acceptedMs = nowMs
            lastReceiveMs = nowMs
        }
    }

    public let localPort: Int
    private let descriptor: Int32
    private let limits: Limits
    private let logger: Logger
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let lock = NSLock()
    private var connections: [UInt32: Connection] = [:]
    private var counters = Counters()
    private var nextID: UInt32 = 1
    /// Receive thread only: the connections in the order their descriptors were handed to `poll`.
    private var polled: [Connection] = []
    private var frame: [UInt8] = []
    private var lastSweepMs: Int64 = 0
    private var wakeBytes = [UInt8](repeating: 0, count: 64)
    /// The largest first frame taken: a STUN Binding request with every attribute a browser puts in it fits.
    static let maxFirstFrame = 1_500

    /// Binds and listens on `host:port` (numeric, or a name resolved to its first address).
    public init(host: String, port: Int, limits: Limits = Limits(), logger: Logger) throws(UDPSocketError) {
        let info = try BindAddress(host: host, port: port, type: Int32(SOCK_STREAM.rawValue))
        let family = info.family
        let fd = socket(
            family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw UDPSocketError(call: "socket", code: errno) }
        var on: Int32 = 1
        // A restarted server takes its port back while old connections sit in TIME_WAIT.
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        if family == AF_INET6 {
            var dualStack: Int32 = 0
            _ = setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &dualStack, socklen_t(MemoryLayout<Int32>.size))
        }
        guard bind(fd, info.address, info.length) == 0, listen(fd, 128) == 0 else {
            let code = errno
            Glibc.close(fd)
            throw UDPSocketError(call: "listen tcp \(host):\(port)", code: code)
        }
        var bound = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &bound) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else {
            let code = errno
            Glibc.close(fd)
            throw UDPSocketError(call: "pipe", code: code)
        }
        for end in ends { Self.makeNonBlocking(end) }
        descriptor = fd
        wakeRead = ends[0]
        wakeWrite = ends[1]
        localPort = UDPSocket.peer(bound)?.port ?? port
        self.limits = limits
        self.logger = logger
        frame.reserveCapacity(ICETCPFramer.maxFrame)
    }

    deinit {
        for connection in connections.values { Glibc.close(connection.fd) }
        Glibc.close(descriptor)
        Glibc.close(wakeRead)
        Glibc.close(wakeWrite)
    }

    public var snapshot: Counters {
        lock.withLock {
            var c = counters
            c.open = connections.count
            return c
        }
    }

    // MARK: any thread

    /// Sends one packet to a TCP peer as a frame; false when the connection is gone or its queue is full.
    /// The first packet Cohost sends on a connection (the answer to a check that passed) validates it.
    @discardableResult
    public func send(_ bytes: [UInt8], to peer: PeerAddress) -> Bool {
        guard bytes.count <= ICETCPFramer.maxFrame,
            let connection = lock.withLock({ connections[peer.stream] }), connection.peer == peer
        else { return false }
        connection.lock.lock()
        guard !connection.closed else {
            connection.lock.unlock()
            return false
        }
        connection.validated = true
        let (high, low) = ICETCPFramer.header(bytes.count)
        var written = 0
        let wasEmpty = connection.pending.isEmpty
        if wasEmpty { written = Self.writeFrame(connection.fd, high, low, bytes) }
        let total = bytes.count + 2
        var dropped = false
        if written < total {
            if written == 0 && connection.pending.count + total > limits.pendingBytes {
                dropped = true
            } else {
                // A frame begun on the wire is finished from the queue, whatever the limit: the stream would
                // be out of step otherwise.
                if written < 2 {
                    if written == 0 { connection.pending.append(high) }
                    connection.pending.append(low)
                }
                connection.pending.append(contentsOf: bytes[max(0, written - 2)...])
            }
        }
        let wake = wasEmpty && !connection.pending.isEmpty
        connection.lock.unlock()
        if dropped { lock.withLock { counters.sendDropped += 1 } }
        if wake {
            var byte: UInt8 = 1
            _ = write(wakeWrite, &byte, 1)
        }
        return !dropped
    }

    /// Writes the header and the payload in one `sendmsg`, without blocking; the count written, 0 on EAGAIN.
    private static func writeFrame(_ fd: Int32, _ high: UInt8, _ low: UInt8, _ bytes: [UInt8]) -> Int {
        var header = (high, low)
        return withUnsafeMutableBytes(of: &header) { head in
            bytes.withUnsafeBytes { payload in
                // A tuple on the stack, not an array: this runs for every packet sent to a TCP peer.
                var vectors = (
                    iovec(iov_base: head.baseAddress, iov_len: 2),
                    iovec(iov_base: UnsafeMutableRawPointer(mutating: payload.baseAddress), iov_len: payload.count)
                )
                return withUnsafeMutablePointer(to: &vectors) { pair in
                    pair.withMemoryRebound(to: iovec.self, capacity: 2) { iov in
                        var message = msghdr()
                        message.msg_iov = iov
                        message.msg_iovlen = payload.count == 0 ? 1 : 2
                        let sent = sendmsg(fd, &message, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
                        return max(sent, 0)
                    }
                }
            }
        }
    }

    // MARK: receive thread

    /// Appends the descriptors to poll: the listening socket, the wake pipe, then each connection (with POLLOUT
    /// when it has bytes queued). `service` must get the same slice back.
    func appendPollDescriptors(to list: inout [pollfd]) {
        list.append(pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0))
        list.append(pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0))
        polled.removeAll(keepingCapacity: true)
        lock.withLock { polled.append(contentsOf: connections.values) }
        for connection in polled {
            let waiting = connection.lock.withLock { !connection.pending.isEmpty }
            list.append(
                pollfd(fd: connection.fd, events: Int16(POLLIN) | (waiting ? Int16(POLLOUT) : 0), revents: 0))
        }
    }

    /// How long the receive thread may sleep in `poll`: until the next connection could time out, or forever.
    var pollTimeoutMs: Int32 { lock.withLock { connections.isEmpty ? -1 : 1_000 } }

    /// Handles what `poll` reported for the descriptors `appendPollDescriptors` added, then closes connections
    /// past their deadlines.
    func service(_ results: ArraySlice<pollfd>, sink: any DatagramSink) {
        let now = MonotonicClock.nowMs()
        let base = results.startIndex
        if results[base + 1].revents != 0 {
            while read(wakeRead, &wakeBytes, wakeBytes.count) > 0 {}
        }
        for (offset, connection) in polled.enumerated() {
            let events = results[base + 2 + offset].revents
            guard events != 0 else { continue }
            if events & Int16(POLLOUT) != 0 { flush(connection) }
            if events & Int16(POLLIN | POLLHUP | POLLERR) != 0 { receive(connection, nowMs: now, sink: sink) }
        }
        if results[base].revents != 0 { accept(nowMs: now) }
        sweep(nowMs: now)
    }

    private func receive(_ connection: Connection, nowMs: Int64, sink: any DatagramSink) {
        // A few reads per wake: a connection that floods cannot keep the others waiting.
        for _ in 0..<4 {
            var failed: Int32 = 0
            let count = connection.framer.read { space in
                let n = recv(connection.fd, space.baseAddress, space.count, Int32(MSG_DONTWAIT))
                if n < 0 { failed = errno }
                return n
            }
            if count == 0 || (count < 0 && failed != EAGAIN && failed != EWOULDBLOCK && failed != EINTR) {
                return drop(connection, reason: .peer)
            }
            if count < 0 { return }
            // A connectivity check is a few hundred bytes: a stranger may not make the framer grow to 64 KB.
            if connection.frames == 0, let length = connection.framer.announcedLength, length > Self.maxFirstFrame {
                return drop(connection, reason: .invalid)
            }
            while connection.framer.next(into: &frame) {
                // RFC 6544 §10: a connection starts with a connectivity check.
                if connection.frames == 0 && (frame.first ?? 0xFF) >= 4 { return drop(connection, reason: .invalid) }
                connection.frames += 1
                connection.lastReceiveMs = nowMs
                lock.withLock { counters.frames += 1 }
                sink.receive(frame, from: connection.peer)
            }
        }
    }

    private func flush(_ connection: Connection) {
        connection.lock.lock()
        defer { connection.lock.unlock() }
        guard !connection.closed, !connection.pending.isEmpty else { return }
        let sent = connection.pending.withUnsafeBytes { bytes in
            Glibc.send(connection.fd, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
        }
        if sent > 0 { connection.pending.removeFirst(sent) }
    }

    private func accept(nowMs: Int64) {
        for _ in 0..<64 {
            var address = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let fd = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.accept(descriptor, $0, &length) }
            }
            guard fd >= 0 else { return }
            Self.makeNonBlocking(fd)
            guard var peer = UDPSocket.peer(address) else {
                Glibc.close(fd)
                continue
            }
            let admitted = lock.withLock { () -> Bool in
                let sameHost = connections.values.reduce(0) { $0 + ($1.peer.hasSameHost(as: peer) ? 1 : 0) }
                guard connections.count < limits.total, sameHost < limits.perAddress else {
                    counters.closedLimit += 1
                    return false
                }
                peer.stream = nextID
                nextID = nextID == .max ? 1 : nextID + 1
                counters.accepted += 1
                connections[peer.stream] = Connection(id: peer.stream, fd: fd, peer: peer, nowMs: nowMs)
                return true
            }
            guard admitted else {
                Glibc.close(fd)
                continue
            }
            var on: Int32 = 1
            // Media: a small frame goes out now, not after the next one.
            _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        }
    }

    /// At most every 200 ms, over the connections just polled: the media thread wakes per datagram batch, and this
    /// allocates nothing.
    private func sweep(nowMs: Int64) {
        guard nowMs - lastSweepMs >= 200 else { return }
        lastSweepMs = nowMs
        for connection in polled {
            let validated = connection.lock.withLock { connection.validated }
            if !validated && nowMs - connection.acceptedMs > limits.validationMs {
                drop(connection, reason: .timeout)
            } else if validated && nowMs - connection.lastReceiveMs > limits.idleMs {
                drop(connection, reason: .idle)
            }
        }
    }

    enum CloseReason { case timeout, invalid, peer, idle }

    private static func makeNonBlocking(_ fd: Int32) {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
    }

    private func drop(_ connection: Connection, reason: CloseReason) {
        connection.lock.withLock {
            guard !connection.closed else { return }
            connection.closed = true
            Glibc.close(connection.fd)
        }
        lock.withLock {
            guard connections.removeValue(forKey: connection.id) != nil else { return }
            switch reason {
            case .timeout: counters.closedTimeout += 1
            case .invalid: counters.closedInvalid += 1
            case .peer: counters.closedPeer += 1
            case .idle: counters.closedIdle += 1
            }
        }
    }
}
