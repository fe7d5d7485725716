/// RFC 4571 framing, as ICE-TCP uses it (RFC 6544 §3): on the stream every STUN, DTLS, RTP or RTCP packet follows
/// its length, 16 bits big-endian. A read may end inside a frame or hold many; the framer keeps what it was given
/// and yields whole frames.
///
/// The buffer starts small (a connection that sends nothing costs little) and grows, at most a few times, to hold
/// one frame at its largest plus one read; then a connection allocates nothing per packet: a read goes straight into
/// the free tail (`read(using:)`), a frame is copied out once.
public struct ICETCPFramer: Sendable {
    /// The largest frame the length prefix can name.
    public static let maxFrame = 65_535

    private var buffer: [UInt8]
    private var start = 0
    private var end = 0

    private static let capacityLimit = 2 * (maxFrame + 2)

    public init(capacity: Int = 8_192) {
        buffer = [UInt8](repeating: 0, count: min(max(capacity, 16), Self.capacityLimit))
    }

    /// Bytes held that no frame yielded yet.
    public var buffered: Int { end - start }

    /// Lets `body` write into the free space (at least one frame's worth, at most half the buffer) and keeps the
    /// count it returns; a negative or zero count keeps nothing. Returns that count.
    @discardableResult
    public mutating func read(using body: (UnsafeMutableRawBufferPointer) -> Int) -> Int {
        if start > 0 {
            // Keep the partial frame at the front: the tail then always has room for a whole read.
            let held = end - start
            buffer.withUnsafeMutableBytes { all in
                guard let base = all.baseAddress, held > 0 else { return }
                base.copyMemory(from: base + start, byteCount: held)  // memmove: the ranges may overlap
            }
            start = 0
            end = held
        }
        if buffer.count - end < 4_096 && buffer.count < Self.capacityLimit {
            // Doubled, and room for a whole read of media at least: a few growths per connection at most.
            let grown = min(Self.capacityLimit, max(buffer.count * 2, end + 4_096))
            buffer.append(contentsOf: repeatElement(0, count: grown - buffer.count))
        }
        let room = min(buffer.count - end, Self.maxFrame + 2)
        guard room > 0 else { return 0 }
        let count = buffer.withUnsafeMutableBytes { all in
            body(UnsafeMutableRawBufferPointer(rebasing: all[end..<(end + room)]))
        }
        guard count > 0 else { return count }
        end += min(count, room)
        return count
    }

    /// Appends bytes (tests and the fuzz target; the server reads with `read(using:)`). Returns how many fitted.
    @discardableResult
    public mutating func append(_ bytes: some Collection<UInt8>) -> Int {
        var remaining = bytes[...]
        var taken = 0
        while !remaining.isEmpty {
            let count = read { space in
                let n = min(space.count, remaining.count)
                for (i, byte) in remaining.prefix(n).enumerated() { space[i] = byte }
                return n
            }
            guard count > 0 else { break }
            taken += count
            remaining = remaining.dropFirst(count)
            // A whole frame's room is free only once the held frames are taken out: the caller takes them.
            if buffered >= Self.maxFrame + 2 { break }
        }
        return taken
    }

    /// The length the next frame's prefix announces, once its two bytes are in.
    public var announcedLength: Int? {
        guard end - start >= 2 else { return nil }
        return Int(buffer[start]) << 8 | Int(buffer[start + 1])
    }

    /// The next whole frame into `frame` (its storage reused), or false when the held bytes end inside one.
    public mutating func next(into frame: inout [UInt8]) -> Bool {
        guard end - start >= 2 else { return false }
        let length = Int(buffer[start]) << 8 | Int(buffer[start + 1])
        guard end - start >= 2 + length else { return false }
        frame.removeAll(keepingCapacity: true)
        frame.append(contentsOf: buffer[(start + 2)..<(start + 2 + length)])
        start += 2 + length
        if start == end {
            start = 0
            end = 0
        }
        return true
    }

    /// The two length bytes that go before a frame of `count` bytes (at most `maxFrame`).
    public static func header(_ count: Int) -> (UInt8, UInt8) {
        (UInt8(truncatingIfNeeded: count >> 8), UInt8(truncatingIfNeeded: count))
    }
}
