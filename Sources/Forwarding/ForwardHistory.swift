/// The last packets one sender sent, by their sequence number, so that receivers' NACKs are answered without
/// asking the sender (mediasoup's `RtpStreamSend`, pion's NACK responder). A ring of reused buffers: recording a
/// packet allocates nothing once each slot has held a full-size one. Pure; confined to its owner.
public struct ForwardHistory: Sendable {
    public struct Entry: Sendable {
        public var sequence: UInt16 = 0
        public var held = false
        public var timestamp: UInt32 = 0
        public var marker = false
        public var payloadType: UInt8 = 0
        public var payload: [UInt8] = []
    }

    private var slots: [Entry]
    private let mask: Int

    /// `capacity` packets, rounded up to a power of two: 512 hold about 2 s of a 2.5 Mbit/s camera.
    public init(capacity: Int = 512) {
        var size = 1
        while size < capacity { size <<= 1 }
        mask = size - 1
        slots = (0..<size).map { _ in
            var e = Entry()
            e.payload.reserveCapacity(1300)
            return e
        }
    }

    public mutating func record(
        sequence: UInt16, timestamp: UInt32, marker: Bool, payloadType: UInt8, payload: ArraySlice<UInt8>
    ) {
        let i = Int(sequence) & mask
        slots[i].sequence = sequence
        slots[i].held = true
        slots[i].timestamp = timestamp
        slots[i].marker = marker
        slots[i].payloadType = payloadType
        slots[i].payload.removeAll(keepingCapacity: true)
        slots[i].payload.append(contentsOf: payload)
    }

    /// Runs `body` on the packet numbered `sequence`, if it is still held; returns whether it was.
    @discardableResult
    public func withPacket(_ sequence: UInt16, _ body: (Entry) -> Void) -> Bool {
        let entry = slots[Int(sequence) & mask]
        guard entry.held, entry.sequence == sequence else { return false }
        body(entry)
        return true
    }

    /// Forgets everything (the sender restarted its stream).
    public mutating func clear() {
        for i in slots.indices { slots[i].held = false }
    }
}
