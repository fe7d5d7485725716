// STUN parser: no input crashes it; whatever parses is written back in a form that parses to the same attributes,
// with a FINGERPRINT that checks; XOR-MAPPED-ADDRESS values decode or are refused.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    _ = STUNMessage.looksLikeSTUN(bytes)
    guard let message = try? STUNMessage(bytes: bytes) else { return 0 }
    _ = message.hasValidFingerprint(in: bytes)
    for attribute in message.attributes where attribute.type == STUNMessage.AttributeType.xorMappedAddress {
        _ = XORMappedAddress.decode(attribute.value, transactionID: message.transactionID)
    }
    let written = message.serialized(fingerprint: true)
    guard let again = try? STUNMessage(bytes: written) else {
        require(false, "a written message did not parse")
        return 0
    }
    require(again.attributes == message.attributes, "attributes changed in a round trip")
    require(again.method == message.method && again.messageClass == message.messageClass, "type changed")
    require(again.hasValidFingerprint(in: written), "a written FINGERPRINT does not check")
    return 0
}
