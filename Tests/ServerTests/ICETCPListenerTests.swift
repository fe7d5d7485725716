import Foundation
import Logging
import Rooms
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import Server

/// Passive ICE-TCP on real loopback sockets, polled by the media receive thread: frames reach the sink as datagrams
/// of a TCP peer, Cohost's packets go back framed, and connections that never prove themselves, start with
/// anything but STUN, or come too many from one address are closed and counted.
@Suite(.serialized) struct ICETCPListenerTests {
    typealias Collector = DatagramReceiverTests.Collector

    /// A Binding request's first bytes (a STUN frame as far as the listener looks) and an RTP-looking frame.
    static let stunFrame: [UInt8] = [0x00, 0x01, 0x00, 0x00, 0x21, 0x12, 0xA4, 0x42] + [UInt8](repeating: 3, count: 12)
    static let rtpFrame: [UInt8] = [0x80, 0x6F, 0x00, 0x01, 9, 9, 9, 9]

    struct ConnectFailed: Error { let port: Int }

    struct Running {
        let listener: ICETCPListener
        let receiver: DatagramReceiver
        let collector: Collector
    }

    func start(_ limits: ICETCPListener.Limits = .init()) throws -> Running {
        let listener = try ICETCPListener(host: "127.0.0.1", port: 0, limits: limits, logger: Logger(label: "test"))
        let media = try UDPSocket(host: "127.0.0.1", port: 0)
        let collector = Collector()
        let receiver = try DatagramReceiver(
            sockets: [media], streams: listener, sink: collector, logger: Logger(label: "test"))
        receiver.start()
        return Running(listener: listener, receiver: receiver, collector: collector)
    }

    /// A blocking client socket connected to the listener, reads timing out after 5 s.
    func client(_ port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard Loopback.connect(fd, port: port) else { throw ConnectFailed(port: port) }
        return fd
    }

    func write(_ fd: Int32, _ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, 0) }
    }

    func framed(_ payload: [UInt8]) -> [UInt8] { [UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)] + payload }

    /// Reads `count` bytes, or fewer when the connection ends (or 5 s pass).
    func read(_ fd: Int32, _ count: Int) -> [UInt8] {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: count)
        while out.count < count {
            let n = recv(fd, &buffer, count - out.count, 0)
            guard n > 0 else { break }
            out += buffer.prefix(n)
        }
        return out
    }

    func waitFor(_ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while !condition() {
            if Date() > deadline { return false }
            usleep(10_000)
        }
        return true
    }

    @Test func framesReachTheSinkAsOneTCPPeersDatagramsAndRepliesGoBackFramed() throws {
        let running = try start()
        defer { running.receiver.stop() }
        let fd = try client(running.listener.localPort)
        defer { close(fd) }
        let stream = framed(Self.stunFrame) + framed(Self.rtpFrame)
        write(fd, Array(stream.prefix(5)))
        usleep(50_000)
        write(fd, Array(stream.dropFirst(5)))
        #expect(running.collector.wait(for: 2))
        let datagrams = running.collector.snapshot.datagrams
        #expect(datagrams.map(\.0) == [Self.stunFrame, Self.rtpFrame])
        let peer = try #require(datagrams.first?.1)
        #expect(peer.isStream && peer.ipv4 == 0x7F00_0001 && datagrams.allSatisfy { $0.1 == peer })
        #expect(running.listener.send([0x01, 0x01, 0x00, 0x00], to: peer))
        #expect(read(fd, 6) == [0x00, 0x04, 0x01, 0x01, 0x00, 0x00])
        var other = peer
        other.stream &+= 1
        #expect(!running.listener.send([1], to: other), "no such connection")
        let counters = running.listener.snapshot
        #expect(counters.open == 1 && counters.accepted == 1 && counters.frames == 2)
    }

    @Test func aConnectionThatStartsWithAnythingButSTUNIsClosed() throws {
        let running = try start()
        defer { running.receiver.stop() }
        let fd = try client(running.listener.localPort)
        defer { close(fd) }
        write(fd, framed(Self.rtpFrame))
        #expect(read(fd, 1).isEmpty, "closed by Cohost")
        #expect(waitFor { running.listener.snapshot.closedInvalid == 1 })
        #expect(running.collector.snapshot.datagrams.isEmpty)
        #expect(running.listener.snapshot.open == 0)
        // A first frame announcing more than a check could be is refused before its bytes come.
        let big = try client(running.listener.localPort)
        defer { close(big) }
        write(big, [0xFF, 0xFF, 0x00, 0x01])
        #expect(read(big, 1).isEmpty)
        #expect(waitFor { running.listener.snapshot.closedInvalid == 2 })
    }

    @Test func anUnansweredConnectionIsClosedAfterTheValidationTimeAndAnAnsweredOneWhenSilent() throws {
        var limits = ICETCPListener.Limits()
        limits.validationMs = 300
        limits.idleMs = 1_500
        let running = try start(limits)
        defer { running.receiver.stop() }
        let silent = try client(running.listener.localPort)
        defer { close(silent) }
        let answered = try client(running.listener.localPort)
        defer { close(answered) }
        write(answered, framed(Self.stunFrame))
        #expect(running.collector.wait(for: 1))
        let peer = try #require(running.collector.snapshot.datagrams.first?.1)
        #expect(running.listener.send([0x01, 0x01, 0, 0], to: peer))
        #expect(read(silent, 1).isEmpty, "the silent one is closed")
        #expect(waitFor { running.listener.snapshot.closedTimeout == 1 })
        #expect(running.listener.snapshot.open == 1, "the answered one stays past the validation time")
        #expect(read(answered, 6).count == 6)
        #expect(read(answered, 1).isEmpty, "then closed once silent for the idle time")
        #expect(waitFor { running.listener.snapshot.closedIdle == 1 })
    }

    @Test func connectionsOverThePerAddressLimitAreClosedAtOnce() throws {
        var limits = ICETCPListener.Limits()
        limits.perAddress = 2
        let running = try start(limits)
        defer { running.receiver.stop() }
        let fds = try (0..<4).map { _ in try client(running.listener.localPort) }
        defer { fds.forEach { close($0) } }
        #expect(waitFor { running.listener.snapshot.closedLimit == 2 })
        #expect(running.listener.snapshot.open == 2 && running.listener.snapshot.accepted == 2)
        #expect(read(fds[2], 1).isEmpty && read(fds[3], 1).isEmpty)
    }
}
