/// Why AMF0 bytes could not be decoded.
public enum AMF0DecodeError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The data ended inside a value that started at `offset`.
    case truncated(offset: Int)
    /// A type marker this decoder does not accept (AMF3 switch, references, XML, typed objects).
    case unsupportedMarker(UInt8, offset: Int)
    /// Objects nested deeper than `AMF0Decoder.maxDepth`.
    case tooDeep
    /// A string that is not UTF-8.
    case invalidString(offset: Int)

    public var description: String {
        switch self {
        case .truncated(let offset): "AMF0 data ends inside the value at byte \(offset)"
        case .unsupportedMarker(let marker, let offset):
            "unsupported AMF0 marker 0x\(String(marker, radix: 16)) at byte \(offset)"
        case .tooDeep: "AMF0 objects nested deeper than \(AMF0Decoder.maxDepth) levels"
        case .invalidString(let offset): "AMF0 string at byte \(offset) is not UTF-8"
        }
    }
}

/// Decodes every value in `bytes` (a script tag body or a data message).
///
/// The input may be hostile: lengths are checked against the remaining bytes before anything is
/// allocated, and nesting is limited. `undefined` decodes as `.null`, a date as its millisecond `.number`.
public func decodeAMF0(_ bytes: [UInt8]) throws(AMF0DecodeError) -> [AMF0Value] {
    var decoder = AMF0Decoder(bytes: bytes)
    var values: [AMF0Value] = []
    while !decoder.isAtEnd {
        values.append(try decoder.value(depth: 0))
    }
    return values
}

/// A cursor over AMF0 bytes.
struct AMF0Decoder {
    static let maxDepth = 32
    let bytes: [UInt8]
    var offset = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { offset >= bytes.count }

    mutating func value(depth: Int) throws(AMF0DecodeError) -> AMF0Value {
        guard depth < Self.maxDepth else { throw .tooDeep }
        let start = offset
        let markerByte = try byte()
        guard let marker = AMF0Marker(rawValue: markerByte) else {
            throw .unsupportedMarker(markerByte, offset: start)
        }
        switch marker {
        case .number:
            return .number(Double(bitPattern: try integer(UInt64.self)))
        case .boolean:
            return .boolean(try byte() != 0)
        case .string:
            return .string(try string(length: Int(try integer(UInt16.self))))
        case .longString:
            return .string(try string(length: Int(try integer(UInt32.self))))
        case .object:
            return .object(try properties(depth: depth))
        case .null, .undefined:
            return .null
        case .ecmaArray:
            _ = try integer(UInt32.self)  // the count is a hint only; the end marker is authoritative
            return .ecmaArray(try properties(depth: depth))
        case .strictArray:
            let count = Int(try integer(UInt32.self))
            // Each element takes at least one byte: a count beyond the remaining bytes is a lie.
            guard count <= bytes.count - offset else { throw .truncated(offset: start) }
            var elements: [AMF0Value] = []
            elements.reserveCapacity(count)
            for _ in 0..<count { elements.append(try value(depth: depth + 1)) }
            return .strictArray(elements)
        case .date:
            let milliseconds = Double(bitPattern: try integer(UInt64.self))
            _ = try integer(UInt16.self)  // time zone, unused by AMF0 writers
            return .number(milliseconds)
        case .objectEnd:
            throw .unsupportedMarker(markerByte, offset: start)
        }
    }

    private mutating func properties(depth: Int) throws(AMF0DecodeError) -> [AMF0Property] {
        var result: [AMF0Property] = []
        while true {
            let nameStart = offset
            let nameLength = Int(try integer(UInt16.self))
            if nameLength == 0 {
                let end = try byte()
                guard end == AMF0Marker.objectEnd.rawValue else { throw .unsupportedMarker(end, offset: nameStart + 2) }
                return result
            }
            let name = try string(length: nameLength)
            result.append(AMF0Property(name, try value(depth: depth + 1)))
        }
    }

    private mutating func byte() throws(AMF0DecodeError) -> UInt8 {
        guard offset < bytes.count else { throw .truncated(offset: offset) }
        defer { offset += 1 }
        return bytes[offset]
    }

    private mutating func integer<T: FixedWidthInteger & UnsignedInteger>(_: T.Type) throws(AMF0DecodeError) -> T {
        let size = MemoryLayout<T>.size
        guard bytes.count - offset >= size else { throw .truncated(offset: offset) }
        var result: T = 0
        for index in offset..<(offset + size) { result = result << 8 | T(bytes[index]) }
        offset += size
        return result
    }

    private mutating func string(length: Int) throws(AMF0DecodeError) -> String {
        let start = offset
        guard bytes.count - offset >= length else { throw .truncated(offset: start) }
        offset += length
        guard let text = String(validating: bytes[start..<offset], as: UTF8.self) else {
            throw .invalidString(offset: start)
        }
        return text
    }
}
