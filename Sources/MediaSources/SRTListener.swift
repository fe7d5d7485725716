import CSRT
import Foundation
import Synchronization

/// An encoder's connection a listener accepted, with the stream id it was let in with (`room/key`).
public protocol PushedConnection: AnyObject, Sendable {
    var streamID: String { get }
    /// Disconnects the encoder (from any thread); a read blocked on the connection returns.
    func close()
}

/// An SRT connection a listener accepted: an encoder pushing MPEG-TS. Owns its socket.
public final class SRTConnection: PushedConnection, @unchecked Sendable {
    /// The socket, where libavformat's read callback (C) finds it.
    let socket: UnsafeMutablePointer<SRTSOCKET>
    /// The stream id the caller gave (`room/key`), checked by the listener before the connection was accepted.
    public let streamID: String
    private let closed = Atomic<Bool>(false)

    init(socket: SRTSOCKET, streamID: String) {
        self.socket = .allocate(capacity: 1)
        self.socket.initialize(to: socket)
        self.streamID = streamID
    }

    deinit {
        close()
        socket.deallocate()
    }

    /// Closes the socket (from any thread): a read blocked on it returns, the encoder is disconnected.
    public func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        srt_close(socket.pointee)
    }
}

/// One SRT port for every room's pushed sources (libsrt, listener mode). A caller's stream id must be one of the
/// allowed `room/key` ids: the check runs in SRT's handshake, so a wrong or revoked key is refused (and counted)
/// before a byte of media is read. Each accepted connection goes to `onConnection` from the accepting thread.
public final class SRTListener: @unchecked Sendable {
    public let port: Int
    private let listener: SRTSOCKET
    private let keys: UnsafeMutablePointer<cohost_srt_keys>
    private let stopped = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)
    private var started = false

    /// A caller that sends nothing for this long is gone.
    static let receiveTimeoutMs: Int32 = 3000

    private static let startup: Void = {
        _ = srt_startup()
        cohost_srt_quiet_logs()
    }()

    /// Binds `host:port` (0: any free port) and listens.
    public init(host: String, port: Int) throws(MediaInputError) {
        _ = Self.startup
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(clamping: port)).bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            throw MediaInputError("the SRT listener needs an IPv4 address, not '\(host)'")
        }
        let s = srt_create_socket()
        guard s != SRT_INVALID_SOCK else { throw MediaInputError("srt_create_socket: \(Self.lastError)") }
        let made = UnsafeMutablePointer<cohost_srt_keys>.allocate(capacity: 1)
        cohost_srt_keys_init(made)
        func fail(_ what: String) -> MediaInputError {
            let error = MediaInputError("\(what): \(Self.lastError)")
            srt_close(s)
            cohost_srt_keys_destroy(made)
            made.deallocate()
            return error
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                srt_bind(s, $0, Int32(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else { throw fail("cannot bind the SRT port \(host):\(port)") }
        guard cohost_srt_listen_checked(s, made) == 0, srt_listen(s, 16) == 0 else {
            throw fail("cannot listen on the SRT port")
        }
        var actual = sockaddr_in()
        var length = Int32(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { srt_getsockname(s, $0, &length) }
        }
        self.port = Int(UInt16(bigEndian: actual.sin_port))
        listener = s
        keys = made
    }

    deinit {
        stop()
        if started { done.wait() }
        cohost_srt_keys_destroy(keys)
        keys.deallocate()
    }

    /// Accepts connections on a thread of its own until `stop()`.
    public func start(_ onConnection: @escaping @Sendable (SRTConnection) -> Void) {
        started = true
        let thread = Thread { [self] in
            defer { done.signal() }
            while !stopped.load(ordering: .acquiring) {
                var peer = sockaddr_storage()
                var length = Int32(MemoryLayout<sockaddr_storage>.size)
                let accepted = withUnsafeMutablePointer(to: &peer) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { srt_accept(listener, $0, &length) }
                }
                guard accepted != SRT_INVALID_SOCK else {
                    if stopped.load(ordering: .acquiring) { return }
                    Thread.sleep(forTimeInterval: 0.01)
                    continue
                }
                _ = cohost_srt_set_int(accepted, SRTO_RCVTIMEO, Self.receiveTimeoutMs)
                var buffer = [CChar](repeating: 0, count: 600)
                let id: String? = buffer.withUnsafeMutableBufferPointer { b in
                    cohost_srt_streamid(accepted, b.baseAddress, Int32(b.count)) >= 0
                        ? String(cString: b.baseAddress!) : nil
                }
                guard let id else {
                    srt_close(accepted)
                    continue
                }
                onConnection(SRTConnection(socket: accepted, streamID: id))
            }
        }
        thread.name = "cohost.srt-listener"
        thread.start()
    }

    /// Lets callers with this stream id in; false when the table is full or the id too long.
    public func allow(_ streamID: String) -> Bool { cohost_srt_keys_add(keys, streamID) == 0 }

    /// Refuses this stream id from now on (a connection already accepted is the owner's to close).
    public func revoke(_ streamID: String) { cohost_srt_keys_remove(keys, streamID) }

    /// Callers refused for an unknown stream id since the start.
    public var refused: Int { Int(cohost_srt_keys_refused(keys)) }

    /// Stops accepting (from any thread); the accepting thread ends soon after.
    public func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        srt_close(listener)
    }

    private static var lastError: String { String(cString: cohost_srt_last_error()) }
}
