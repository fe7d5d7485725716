import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Logging
import Rooms

/// Where the receive thread delivers; called on that thread only, one datagram at a time.
public protocol DatagramSink: AnyObject {
    /// One whole datagram. `bytes` is the receiver's reused storage: valid only during the call.
    func receive(_ bytes: [UInt8], from peer: PeerAddress)
    /// A datagram longer than a batch slot (it arrived cut) or from an address family that is not IP.
    func dropMalformed()
}

/// The media ports' receive thread: it sleeps in `poll` on its sockets, drains whichever is readable with
/// `recvmmsg` into one preallocated batch, and hands each datagram to the sink on this thread: one thread
/// for every socket, so the sink sees datagrams one at a time, as it did under NIO's single event loop.
/// A pipe wakes it to stop. Nothing here allocates per datagram.
public final class DatagramReceiver: @unchecked Sendable {
    private let sockets: [UDPSocket]
    /// ICE-TCP's listener and connections, polled beside the sockets so their frames reach the sink on this thread.
    private let streams: ICETCPListener?
    private let sink: any DatagramSink
    private let batch: DatagramBatch
    private let logger: Logger
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let lock = NSLock()
    private var started = false
    private var stopped = false
    private let finished = DispatchSemaphore(value: 0)
    /// Receive calls that failed for a reason other than "nothing waiting" (receive thread only).
    private var receiveErrors = 0

    public init(
        sockets: [UDPSocket], streams: ICETCPListener? = nil, sink: any DatagramSink,
        batch: DatagramBatch = DatagramBatch(), logger: Logger
    ) throws(UDPSocketError) {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw UDPSocketError(call: "pipe", code: errno) }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        wakeRead = ends[0]
        wakeWrite = ends[1]
        self.sockets = sockets
        self.streams = streams
        self.sink = sink
        self.batch = batch
        self.logger = logger
    }

    deinit {
        close(wakeRead)
        close(wakeWrite)
    }

    /// Starts the thread, which holds the receiver until `stop()`.
    public func start() {
        let go = lock.withLock { () -> Bool in
            defer { started = true }
            return !started && !stopped
        }
        guard go else { return }
        let thread = Thread { [self] in
            run()
            finished.signal()
        }
        thread.name = "cohost-udp"
        thread.start()
    }

    /// Wakes the thread and waits for it to return; later datagrams stay in the kernel until the sockets close.
    public func stop() {
        let running = lock.withLock { () -> Bool in
            defer { stopped = true }
            return started && !stopped
        }
        guard running else { return }
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
        finished.wait()
    }

    private func run() {
        var polled = sockets.map { pollfd(fd: $0.descriptor, events: Int16(POLLIN), revents: 0) }
        polled.append(pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0))
        let fixed = polled.count
        var bytes: [UInt8] = []
        bytes.reserveCapacity(batch.slotSize)
        var pollErrors = 0
        while true {
            if let streams {
                polled.removeSubrange(fixed...)
                streams.appendPollDescriptors(to: &polled)
            }
            let ready = poll(&polled, nfds_t(polled.count), streams?.pollTimeoutMs ?? -1)
            if ready < 0 {
                let code = errno
                if code == EINTR { continue }
                // ENOMEM and the like pass: the thread waits a moment and polls again rather than leave the
                // server up but deaf (powers of two only in the log).
                pollErrors += 1
                if pollErrors & (pollErrors - 1) == 0 {
                    logger.error(
                        "media poll failed",
                        metadata: [
                            "error": "\(UDPSocketError(call: "poll", code: code))",
                            "count": "\(pollErrors)",
                        ])
                }
                usleep(10_000)
                continue
            }
            if polled[sockets.count].revents != 0 { return }
            for index in sockets.indices where polled[index].revents != 0 {
                drain(sockets[index], into: &bytes)
            }
            streams?.service(polled[fixed...], sink: sink)
        }
    }

    /// At most 8 batches per wake, so a flooded port cannot keep the other one waiting.
    private func drain(_ socket: UDPSocket, into bytes: inout [UInt8]) {
        for _ in 0..<8 {
            let count: Int
            do {
                count = try socket.receive(into: batch)
            } catch {
                receiveErrors += 1
                // Powers of two only: a persistent error must not flood the log.
                if receiveErrors & (receiveErrors - 1) == 0 {
                    logger.warning(
                        "media receive failed", metadata: ["error": "\(error)", "count": "\(receiveErrors)"])
                }
                return
            }
            for index in 0..<count {
                batch.withDatagram(index) { data, peer, truncated in
                    guard let peer, !truncated else {
                        sink.dropMalformed()
                        return
                    }
                    // Copied in place: `bytes` keeps its capacity and is unique here.
                    bytes.removeAll(keepingCapacity: true)
                    bytes.append(contentsOf: data)
                    sink.receive(bytes, from: peer)
                }
            }
            if count < batch.capacity { return }
        }
    }
}
