/// Why bytes are not a STUN message Cohost accepts.
public enum STUNError: Error, Equatable, Sendable, CustomStringConvertible {
    case tooShort(Int)
    case notSTUN(String)
    case badLength(declared: Int, actual: Int)
    case truncatedAttribute(type: UInt16)
    case tooManyAttributes
    case misplacedAttribute(type: UInt16)

    public var description: String {
        switch self {
        case .tooShort(let n): "STUN message of \(n) bytes is shorter than its 20-byte header"
        case .notSTUN(let why): "not a STUN message: \(why)"
        case .badLength(let declared, let actual):
            "STUN length field says \(declared) bytes of attributes, the datagram holds \(actual)"
        case .truncatedAttribute(let type): "STUN attribute 0x\(String(type, radix: 16)) runs past the message"
        case .tooManyAttributes: "STUN message has more than \(STUNMessage.maxAttributes) attributes"
        case .misplacedAttribute(let type):
            "STUN attribute 0x\(String(type, radix: 16)) follows MESSAGE-INTEGRITY or FINGERPRINT"
        }
    }
}
