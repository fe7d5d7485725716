import Foundation
import Testing
import Logging
import Rooms
@testable import Server

/// The receive thread on real loopback sockets: every datagram of either socket reaches the sink whole,
/// cut ones are dropped as malformed, and `stop()` returns with the thread gone.
@Suite struct DatagramReceiverTests {
    final class Collector: DatagramSink, @unchecked Sendable {
        private let lock = NSLock()
        private var datagrams: [([UInt8], PeerAddress)] = []
        private var malformed = 0
        private let arrived = DispatchSemaphore(value: 0)

        func receive(_ bytes: [UInt8], from peer: PeerAddress) {
            lock.withLock { datagrams.append((bytes, peer)) }
            arrived.signal()
        }

        func dropMalformed() {
            lock.withLock { malformed += 1 }
            arrived.signal()
        }

        /// Waits for `count` deliveries (a datagram or a drop); false after 10 s without them.
        func wait(for count: Int) -> Bool {
            (0..<count).allSatisfy { _ in arrived.wait(timeout: .now() + 10) == .success }
        }

        var snapshot: (datagrams: [([UInt8], PeerAddress)], malformed: Int) { lock.withLock { (datagrams, malformed) } }
    }

    @Test func datagramsOfBothSocketsReachTheSinkWholeAndInOrderPerSocket() throws {
        let media = try UDPSocket(host: "127.0.0.1", port: 0)
        let rtcp = try UDPSocket(host: "127.0.0.1", port: 0)
        let sender = try UDPSocket(host: "127.0.0.1", port: 0)
        let collector = Collector()
        let receiver = try DatagramReceiver(
            sockets: [media, rtcp], sink: collector,
            batch: DatagramBatch(capacity: 4, slotSize: 32), logger: Logger(label: "test"))
        receiver.start()
        defer { receiver.stop() }
        for index in 0..<40 {
            let port = index % 5 == 0 ? rtcp.localPort : media.localPort
            #expect(sender.send([UInt8(index), UInt8(port & 0xFF)], to: PeerAddress(host: "127.0.0.1", port: port)))
        }
        #expect(
            sender.send([UInt8](repeating: 1, count: 33), to: PeerAddress(host: "127.0.0.1", port: media.localPort)))
        #expect(collector.wait(for: 41))
        let (datagrams, malformed) = collector.snapshot
        #expect(malformed == 1)
        #expect(datagrams.allSatisfy { $0.1 == PeerAddress(ipv4: 0x7F00_0001, port: sender.localPort) })
        let toMedia = datagrams.map(\.0).filter { $0[1] == UInt8(media.localPort & 0xFF) }.map { $0[0] }
        let toRTCP = datagrams.map(\.0).filter { $0[1] == UInt8(rtcp.localPort & 0xFF) }.map { $0[0] }
        #expect(toMedia == (0..<40).filter { $0 % 5 != 0 }.map(UInt8.init))
        #expect(toRTCP == (0..<40).filter { $0 % 5 == 0 }.map(UInt8.init))
    }

    @Test func stopEndsTheThreadAndLaterDatagramsAreNotDelivered() throws {
        let media = try UDPSocket(host: "127.0.0.1", port: 0)
        let sender = try UDPSocket(host: "127.0.0.1", port: 0)
        let collector = Collector()
        let receiver = try DatagramReceiver(sockets: [media], sink: collector, logger: Logger(label: "test"))
        receiver.start()
        #expect(sender.send([1], to: PeerAddress(host: "127.0.0.1", port: media.localPort)))
        #expect(collector.wait(for: 1))
        receiver.stop()
        receiver.stop()
        #expect(sender.send([2], to: PeerAddress(host: "127.0.0.1", port: media.localPort)))
        // Still queued in the kernel, never handed on: the thread is gone.
        let batch = DatagramBatch(capacity: 2, slotSize: 8)
        #expect(try media.receive(into: batch) == 1)
        #expect(collector.snapshot.datagrams.map(\.0) == [[1]])
    }
}
