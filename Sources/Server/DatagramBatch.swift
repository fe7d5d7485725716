import Foundation
#if canImport(Glibc)
import Glibc
#endif
import CUDP
import Rooms

/// Storage for one `recvmmsg`: `capacity` slots of `slotSize` bytes with each datagram's length, sender and
/// truncation flag, allocated once and reused for every batch (the receive path allocates nothing).
/// Confined to the thread that receives.
public final class DatagramBatch: @unchecked Sendable {
    public let capacity: Int
    public let slotSize: Int
    /// Datagrams received by the last `UDPSocket.receive(into:)`.
    public internal(set) var count = 0
    let buffer: UnsafeMutablePointer<UInt8>
    let lengths: UnsafeMutablePointer<UInt32>
    let peers: UnsafeMutablePointer<sockaddr_storage>
    let truncated: UnsafeMutablePointer<UInt8>

    /// `slotSize` bounds a datagram: longer ones arrive cut and flagged (RTP stays under the path MTU).
    public init(capacity: Int = 16, slotSize: Int = 2048) {
        precondition(capacity > 0 && capacity <= Int(CUDP_MAX_BATCH) && slotSize > 0)
        self.capacity = capacity
        self.slotSize = slotSize
        buffer = .allocate(capacity: capacity * slotSize)
        lengths = .allocate(capacity: capacity)
        lengths.initialize(repeating: 0, count: capacity)
        peers = .allocate(capacity: capacity)
        peers.initialize(repeating: sockaddr_storage(), count: capacity)
        truncated = .allocate(capacity: capacity)
        truncated.initialize(repeating: 0, count: capacity)
    }

    deinit {
        buffer.deallocate()
        lengths.deallocate()
        peers.deallocate()
        truncated.deallocate()
    }

    /// Datagram `index` of the last batch: its bytes (valid only inside `body`), its sender (nil for an
    /// address family other than IPv4/IPv6) and whether it was longer than a slot.
    public func withDatagram<R>(
        _ index: Int, _ body: (UnsafeRawBufferPointer, PeerAddress?, Bool) throws -> R
    ) rethrows -> R {
        precondition(index >= 0 && index < count)
        let bytes = UnsafeRawBufferPointer(start: buffer + index * slotSize, count: min(Int(lengths[index]), slotSize))
        return try body(bytes, UDPSocket.peer(peers[index]), truncated[index] != 0)
    }
}
