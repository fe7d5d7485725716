/// A STUN message (RFC 8489 §5), as ICE connectivity checks use it (RFC 8445 §7.1): the header, the attributes
/// in order, and where MESSAGE-INTEGRITY and FINGERPRINT sit, so both can be checked over the bytes they cover.
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |0 0|     STUN Message Type     |         Message Length        |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                         Magic Cookie                          |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                     Transaction ID (96 bits)                  |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |  attributes: type (16) | length (16) | value, padded to 4 bytes |
/// ```
public struct STUNMessage: Equatable, Sendable {
    public static let magicCookie: UInt32 = 0x2112_A442
    public static let headerSize = 20
    /// Attributes besides MESSAGE-INTEGRITY and FINGERPRINT: more than any ICE check carries; a message with more
    /// is refused.
    public static let maxAttributes = 32

    public enum MessageClass: UInt16, Sendable {
        case request = 0, indication = 1, success = 2, error = 3
    }

    /// Attribute types Cohost reads or writes (RFC 8489 §18.3, RFC 8445 §16.1).
    public enum AttributeType {
        public static let username: UInt16 = 0x0006
        public static let messageIntegrity: UInt16 = 0x0008
        public static let errorCode: UInt16 = 0x0009
        public static let xorMappedAddress: UInt16 = 0x0020
        public static let priority: UInt16 = 0x0024
        public static let useCandidate: UInt16 = 0x0025
        public static let software: UInt16 = 0x8022
        public static let fingerprint: UInt16 = 0x8028
        public static let iceControlled: UInt16 = 0x8029
        public static let iceControlling: UInt16 = 0x802A
    }

    public static let bindingMethod: UInt16 = 0x001

    public struct Attribute: Equatable, Sendable {
        public var type: UInt16
        public var value: [UInt8]
        public init(type: UInt16, value: [UInt8]) {
            self.type = type
            self.value = value
        }
    }

    public var method: UInt16
    public var messageClass: MessageClass
    public var transactionID: [UInt8]
    /// Every attribute but MESSAGE-INTEGRITY and FINGERPRINT, in order.
    public var attributes: [Attribute]
    /// Where MESSAGE-INTEGRITY starts in the parsed bytes (its header), and its 20-byte HMAC; nil when absent.
    public private(set) var integrity: (offset: Int, mac: [UInt8])?
    /// Where FINGERPRINT starts in the parsed bytes, and its value; nil when absent.
    public private(set) var fingerprint: (offset: Int, value: UInt32)?

    public init(method: UInt16, messageClass: MessageClass, transactionID: [UInt8], attributes: [Attribute] = []) {
        self.method = method
        self.messageClass = messageClass
        self.transactionID = transactionID
        self.attributes = attributes
    }

    public static func == (a: Self, b: Self) -> Bool {
        a.method == b.method && a.messageClass == b.messageClass && a.transactionID == b.transactionID
            && a.attributes == b.attributes && a.integrity?.offset == b.integrity?.offset
            && a.integrity?.mac == b.integrity?.mac && a.fingerprint?.offset == b.fingerprint?.offset
            && a.fingerprint?.value == b.fingerprint?.value
    }

    /// Whether a datagram's first bytes say STUN (RFC 7983: first byte 0–3, and the magic cookie).
    public static func looksLikeSTUN(_ bytes: [UInt8]) -> Bool {
        bytes.count >= headerSize && bytes[0] < 4 && readUInt32(bytes, 4) == magicCookie
    }

    /// Parses and bounds-checks a message; checks neither MESSAGE-INTEGRITY nor FINGERPRINT (`hasValidIntegrity`,
    /// `hasValidFingerprint` do). Only FINGERPRINT may follow MESSAGE-INTEGRITY, and nothing FINGERPRINT.
    public init(bytes: [UInt8]) throws(STUNError) {
        guard bytes.count >= Self.headerSize else { throw .tooShort(bytes.count) }
        guard bytes[0] & 0xC0 == 0 else { throw .notSTUN("the first two bits are not zero") }
        guard Self.readUInt32(bytes, 4) == Self.magicCookie else { throw .notSTUN("no magic cookie") }
        let length = Int(Self.readUInt16(bytes, 2))
        guard length == bytes.count - Self.headerSize, length % 4 == 0 else {
            throw .badLength(declared: length, actual: bytes.count - Self.headerSize)
        }
        let type = Self.readUInt16(bytes, 0)
        method = (type & 0x000F) | ((type & 0x00E0) >> 1) | ((type & 0x3E00) >> 2)
        messageClass = MessageClass(rawValue: ((type & 0x0010) >> 4) | ((type & 0x0100) >> 7)) ?? .request
        transactionID = Array(bytes[8..<20])
        attributes = []
        var offset = Self.headerSize
        var count = 0
        while offset < bytes.count {
            guard offset + 4 <= bytes.count else { throw .truncatedAttribute(type: 0) }
            let attributeType = Self.readUInt16(bytes, offset)
            let size = Int(Self.readUInt16(bytes, offset + 2))
            let end = offset + 4 + size
            guard end <= bytes.count else { throw .truncatedAttribute(type: attributeType) }
            if fingerprint != nil
                || (integrity != nil && attributeType != AttributeType.fingerprint)
            {
                throw .misplacedAttribute(type: attributeType)
            }
            let value = Array(bytes[(offset + 4)..<end])
            switch attributeType {
            case AttributeType.messageIntegrity:
                guard size == 20 else { throw .truncatedAttribute(type: attributeType) }
                integrity = (offset, value)
            case AttributeType.fingerprint:
                guard size == 4 else { throw .truncatedAttribute(type: attributeType) }
                fingerprint = (offset, Self.readUInt32(value, 0))
            default:
                count += 1
                guard count <= Self.maxAttributes else { throw .tooManyAttributes }
                attributes.append(Attribute(type: attributeType, value: value))
            }
            offset = end + (4 - size % 4) % 4
        }
    }

    public func attribute(_ type: UInt16) -> [UInt8]? { attributes.first { $0.type == type }?.value }

    /// USERNAME as text, when present and UTF-8.
    public var username: String? {
        attribute(AttributeType.username).flatMap { String(validating: $0, as: UTF8.self) }
    }

    /// Whether FINGERPRINT in `bytes` is the CRC-32 of what precedes it XOR 0x5354554E (RFC 8489 §14.7). False when
    /// absent.
    public func hasValidFingerprint(in bytes: [UInt8]) -> Bool {
        guard let fingerprint, fingerprint.offset <= bytes.count else { return false }
        var covered = Array(bytes[0..<fingerprint.offset])
        let length = fingerprint.offset + 8 - Self.headerSize
        covered[2] = UInt8(length >> 8)
        covered[3] = UInt8(length & 0xFF)
        return CRC32.checksum(covered[...]) ^ 0x5354_554E == fingerprint.value
    }

    /// The wire form: the attributes, then MESSAGE-INTEGRITY when `mac` gives one (the HMAC of the bytes it is
    /// passed), then FINGERPRINT when asked for.
    public func serialized(mac: (([UInt8]) -> [UInt8])? = nil, fingerprint addFingerprint: Bool = false) -> [UInt8] {
        var out: [UInt8] = []
        let type =
            (method & 0x000F) | ((method & 0x0070) << 1) | ((method & 0x0F80) << 2)
            | ((messageClass.rawValue & 0x1) << 4) | ((messageClass.rawValue & 0x2) << 7)
        Self.append16(&out, type)
        Self.append16(&out, 0)
        Self.append32(&out, Self.magicCookie)
        out.append(contentsOf: transactionID.prefix(12))
        out.append(contentsOf: repeatElement(0, count: max(0, 12 - transactionID.count)))
        for attribute in attributes {
            Self.append16(&out, attribute.type)
            Self.append16(&out, UInt16(min(attribute.value.count, 0xFFFF)))
            out.append(contentsOf: attribute.value.prefix(0xFFFF))
            out.append(contentsOf: repeatElement(0, count: (4 - attribute.value.count % 4) % 4))
        }
        if let mac {
            Self.setLength(&out, out.count + 24 - Self.headerSize)
            let code = mac(out)
            Self.append16(&out, AttributeType.messageIntegrity)
            Self.append16(&out, 20)
            out.append(contentsOf: code.prefix(20))
            out.append(contentsOf: repeatElement(0, count: max(0, 20 - code.count)))
        }
        if addFingerprint {
            Self.setLength(&out, out.count + 8 - Self.headerSize)
            let crc = CRC32.checksum(out[...]) ^ 0x5354_554E
            Self.append16(&out, AttributeType.fingerprint)
            Self.append16(&out, 4)
            Self.append32(&out, crc)
        }
        Self.setLength(&out, out.count - Self.headerSize)
        return out
    }

    // MARK: bytes

    static func readUInt16(_ b: [UInt8], _ i: Int) -> UInt16 { UInt16(b[i]) << 8 | UInt16(b[i + 1]) }
    static func readUInt32(_ b: [UInt8], _ i: Int) -> UInt32 {
        UInt32(b[i]) << 24 | UInt32(b[i + 1]) << 16 | UInt32(b[i + 2]) << 8 | UInt32(b[i + 3])
    }
    static func append16(_ out: inout [UInt8], _ v: UInt16) {
        out.append(UInt8(v >> 8))
        out.append(UInt8(v & 0xFF))
    }
    static func append32(_ out: inout [UInt8], _ v: UInt32) {
        append16(&out, UInt16(v >> 16))
        append16(&out, UInt16(v & 0xFFFF))
    }
    static func setLength(_ out: inout [UInt8], _ length: Int) {
        out[2] = UInt8((length >> 8) & 0xFF)
        out[3] = UInt8(length & 0xFF)
    }
}
