/// One AMF0 value (Action Message Format 0, the encoding of FLV script tags and RTMP data messages).
///
/// Objects and ECMA arrays keep their keys in order, because players and servers read `onMetaData`
/// in the order written and golden tests compare bytes.
public enum AMF0Value: Equatable, Sendable {
    case number(Double)
    case boolean(Bool)
    case string(String)
    case object([AMF0Property])
    case null
    case ecmaArray([AMF0Property])
    case strictArray([AMF0Value])
}

/// One named member of an AMF0 object or ECMA array.
public struct AMF0Property: Equatable, Sendable {
    public var name: String
    public var value: AMF0Value

    public init(_ name: String, _ value: AMF0Value) {
        self.name = name
        self.value = value
    }
}

extension AMF0Value {
    /// The member named `name` of an object or ECMA array (first match), nil otherwise.
    public subscript(name: String) -> AMF0Value? {
        switch self {
        case .object(let properties), .ecmaArray(let properties):
            return properties.first { $0.name == name }?.value
        default:
            return nil
        }
    }
}

/// AMF0 type markers (AMF0 spec, section 2.1).
enum AMF0Marker: UInt8 {
    case number = 0x00, boolean = 0x01, string = 0x02, object = 0x03, null = 0x05, undefined = 0x06
    case ecmaArray = 0x08, objectEnd = 0x09, strictArray = 0x0A, date = 0x0B, longString = 0x0C
}

/// Encodes values back to back, as a script tag body or data message carries them.
public func encodeAMF0(_ values: [AMF0Value]) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(64 * values.count)
    for value in values { AMF0Writer.append(value, to: &out) }
    return out
}

/// The byte-level writer behind `encodeAMF0`.
enum AMF0Writer {
    static func append(_ value: AMF0Value, to out: inout [UInt8]) {
        switch value {
        case .number(let number):
            out.append(AMF0Marker.number.rawValue)
            appendBigEndian(number.bitPattern, to: &out)
        case .boolean(let flag):
            out.append(AMF0Marker.boolean.rawValue)
            out.append(flag ? 1 : 0)
        case .string(let string):
            let utf8 = Array(string.utf8)
            if utf8.count <= Int(UInt16.max) {
                out.append(AMF0Marker.string.rawValue)
                appendBigEndian(UInt16(utf8.count), to: &out)
            } else {
                // Strings over 64 KiB need the long-string marker (32-bit length).
                out.append(AMF0Marker.longString.rawValue)
                appendBigEndian(UInt32(clamping: utf8.count), to: &out)
            }
            out.append(contentsOf: utf8)
        case .object(let properties):
            out.append(AMF0Marker.object.rawValue)
            appendProperties(properties, to: &out)
        case .null:
            out.append(AMF0Marker.null.rawValue)
        case .ecmaArray(let properties):
            out.append(AMF0Marker.ecmaArray.rawValue)
            appendBigEndian(UInt32(clamping: properties.count), to: &out)
            appendProperties(properties, to: &out)
        case .strictArray(let values):
            out.append(AMF0Marker.strictArray.rawValue)
            appendBigEndian(UInt32(clamping: values.count), to: &out)
            for element in values { append(element, to: &out) }
        }
    }

    /// Members as (UTF-8 name with 16-bit length, value) pairs, then the empty name + object-end marker.
    private static func appendProperties(_ properties: [AMF0Property], to out: inout [UInt8]) {
        for property in properties {
            // Names are ours (metadata keys), never near 64 KiB; cut rather than write a wrong length.
            let name = Array(property.name.utf8.prefix(Int(UInt16.max)))
            appendBigEndian(UInt16(name.count), to: &out)
            out.append(contentsOf: name)
            append(property.value, to: &out)
        }
        out.append(contentsOf: [0x00, 0x00, AMF0Marker.objectEnd.rawValue])
    }

    static func appendBigEndian<T: FixedWidthInteger>(_ value: T, to out: inout [UInt8]) {
        var big = value.bigEndian
        withUnsafeBytes(of: &big) { out.append(contentsOf: $0) }
    }
}
