import CRTMP
import Foundation
import Synchronization

/// An RTMP connection a listener accepted: an encoder publishing FLV. Owns its librtmp session and socket.
public final class RTMPConnection: PushedConnection, @unchecked Sendable {
    let session: UnsafeMutablePointer<cohost_rtmp_session>
    public let streamID: String
    private let closed = Atomic<Bool>(false)

    init(session: UnsafeMutablePointer<cohost_rtmp_session>, streamID: String) {
        self.session = session
        self.streamID = streamID
    }

    deinit { cohost_rtmp_session_free(session) }

    public func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        cohost_rtmp_session_shutdown(session)
    }
}

/// One RTMP port for every room's pushed sources. An encoder connects to `rtmp://host:port/<room>/<key>`: librtmp
/// makes the handshake and the publisher's commands are answered until it publishes; the stream id `room/key` is
/// then checked (`authorize`) before any media is read, and a wrong one is answered `NetStream.Publish.BadName`,
/// closed and counted. Each connection is handled on a thread of its own, at most `maxHandshakes` at once.
public final class RTMPListener: @unchecked Sendable {
    public let port: Int
    private let fd: Int32
    private let stopped = Atomic<Bool>(false)
    private let handshakes = Atomic<Int>(0)
    private let refusedCount = Atomic<Int>(0)

    static let maxHandshakes = 32
    static let handshakeTimeoutMs: Int32 = 5000
    /// A publisher that sends nothing for this long is gone.
    static let readTimeoutMs: Int32 = 3000

    public init(host: String, port: Int) throws(MediaInputError) {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(clamping: port)).bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            throw MediaInputError("the RTMP listener needs an IPv4 address, not '\(host)'")
        }
        let s = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard s >= 0 else { throw MediaInputError("socket: \(String(cString: strerror(errno)))") }
        var one: Int32 = 1
        setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(s, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(s, 64) == 0 else {
            let error = MediaInputError(
                "cannot listen on the RTMP port \(host):\(port): \(String(cString: strerror(errno)))")
            Glibc.close(s)
            throw error
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(s, $0, &length) }
        }
        self.port = Int(UInt16(bigEndian: actual.sin_port))
        fd = s
    }

    deinit {
        stop()
        Glibc.close(fd)
    }

    /// Publishers refused for a wrong or revoked stream key since the start.
    public var refused: Int { refusedCount.load(ordering: .relaxed) }

    /// Accepts connections until `stop()`: `authorize` says whether a `room/key` may publish, `onConnection` gets
    /// each one that may, ready to be read.
    public func start(
        authorize: @escaping @Sendable (String) -> Bool,
        onConnection: @escaping @Sendable (RTMPConnection) -> Void
    ) {
        let thread = Thread { [self] in
            while !stopped.load(ordering: .acquiring) {
                let client = accept(fd, nil, nil)
                guard client >= 0 else {
                    if stopped.load(ordering: .acquiring) { return }
                    Thread.sleep(forTimeInterval: 0.01)
                    continue
                }
                guard handshakes.add(1, ordering: .relaxed).newValue <= Self.maxHandshakes else {
                    handshakes.subtract(1, ordering: .relaxed)
                    Glibc.close(client)
                    continue
                }
                let handler = Thread { [self] in
                    defer { handshakes.subtract(1, ordering: .relaxed) }
                    serve(client, authorize: authorize, onConnection: onConnection)
                }
                handler.name = "cohost.rtmp-publisher"
                handler.start()
            }
        }
        thread.name = "cohost.rtmp-listener"
        thread.start()
    }

    private func serve(
        _ client: Int32, authorize: @Sendable (String) -> Bool, onConnection: @Sendable (RTMPConnection) -> Void
    ) {
        guard let session = cohost_rtmp_session_new(client, Self.handshakeTimeoutMs) else { return }
        guard cohost_rtmp_session_await_publish(session, Self.handshakeTimeoutMs * 2) == 1 else {
            cohost_rtmp_session_free(session)
            return
        }
        let id =
            String(cString: cohost_rtmp_session_app(session)) + "/" + String(cString: cohost_rtmp_session_name(session))
        guard authorize(id) else {
            refusedCount.add(1, ordering: .relaxed)
            cohost_rtmp_session_refuse(session)
            cohost_rtmp_session_free(session)
            return
        }
        guard cohost_rtmp_session_accept(session, Self.readTimeoutMs) != 0 else {
            cohost_rtmp_session_free(session)
            return
        }
        onConnection(RTMPConnection(session: session, streamID: id))
    }

    /// Stops accepting (from any thread).
    public func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        shutdown(fd, Int32(SHUT_RDWR))
    }
}
