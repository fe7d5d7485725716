// Big-endian helpers shared by the wire types. Readers do no bounds checking of their own:
// every caller checks the length first, so a read here is never reached with a short buffer.

@inline(__always)
func readUInt16(_ b: [UInt8], _ i: Int) -> UInt16 {
    UInt16(b[i]) << 8 | UInt16(b[i + 1])
}

@inline(__always)
func readUInt24(_ b: [UInt8], _ i: Int) -> UInt32 {
    UInt32(b[i]) << 16 | UInt32(b[i + 1]) << 8 | UInt32(b[i + 2])
}

@inline(__always)
func readUInt32(_ b: [UInt8], _ i: Int) -> UInt32 {
    UInt32(b[i]) << 24 | UInt32(b[i + 1]) << 16 | UInt32(b[i + 2]) << 8 | UInt32(b[i + 3])
}

extension Array where Element == UInt8 {
    /// Room for `n` more bytes, growing geometrically as appending would: a bare `reserveCapacity(count + n)`
    /// grows by exactly `n`, which makes a buffer built packet by packet reallocate every time.
    mutating func reserve(additional n: Int) {
        if capacity - count < n { reserveCapacity(Swift.max(count + n, 2 * capacity)) }
    }

    @inline(__always)
    mutating func appendBigEndian(_ v: UInt16) {
        append(UInt8(truncatingIfNeeded: v >> 8))
        append(UInt8(truncatingIfNeeded: v))
    }

    @inline(__always)
    mutating func appendBigEndian24(_ v: UInt32) {
        append(UInt8(truncatingIfNeeded: v >> 16))
        append(UInt8(truncatingIfNeeded: v >> 8))
        append(UInt8(truncatingIfNeeded: v))
    }

    @inline(__always)
    mutating func appendBigEndian(_ v: UInt32) {
        append(UInt8(truncatingIfNeeded: v >> 24))
        append(UInt8(truncatingIfNeeded: v >> 16))
        append(UInt8(truncatingIfNeeded: v >> 8))
        append(UInt8(truncatingIfNeeded: v))
    }

    @inline(__always)
    mutating func appendBigEndian(_ v: UInt64) {
        appendBigEndian(UInt32(truncatingIfNeeded: v >> 32))
        appendBigEndian(UInt32(truncatingIfNeeded: v))
    }
}
