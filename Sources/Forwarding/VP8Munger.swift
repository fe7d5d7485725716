/// Keeps a forwarded VP8 stream's picture id and TL0PICIDX (RFC 7741 §4.2) continuous when the slot switches
/// from one sender to another: decoders drop frames whose picture ids jump. Each source gets offsets at its first
/// keyframe so that its first picture follows the last one sent; the fields are rewritten in place, in the width
/// the sender wrote them (7 or 15 bits). Pure: one per receiver slot, confined to its owner.
public struct VP8Munger: Sendable {
    private var pictureOffset: UInt16 = 0
    private var tl0Offset: UInt8 = 0
    /// The last picture id and TL0PICIDX written (15-bit space for the id), nil before any.
    private var lastPicture: UInt16?
    private var lastTL0: UInt8?

    public init() {}

    /// Where the fields are in a payload: offsets from its start, and the picture id's width.
    struct Fields {
        var picture: (offset: Int, long: Bool)?
        var tl0: Int?
    }

    static func fields(_ payload: ArraySlice<UInt8>) -> Fields? {
        guard let first = payload.first else { return nil }
        var fields = Fields()
        guard first & 0x80 != 0 else { return fields }
        var offset = 1
        guard payload.count > offset else { return nil }
        let flags = payload[payload.startIndex + offset]
        offset += 1
        if flags & 0x80 != 0 {
            guard payload.count > offset else { return nil }
            let long = payload[payload.startIndex + offset] & 0x80 != 0
            guard payload.count > offset + (long ? 1 : 0) else { return nil }
            fields.picture = (offset, long)
            offset += long ? 2 : 1
        }
        if flags & 0x40 != 0 {
            guard payload.count > offset else { return nil }
            fields.tl0 = offset
        }
        return fields
    }

    /// The first keyframe of a new source: the next picture id and TL0PICIDX follow the last ones sent.
    public mutating func restart(at payload: ArraySlice<UInt8>) {
        guard let fields = Self.fields(payload) else { return }
        if let picture = fields.picture {
            let id = Self.readPicture(payload, picture)
            pictureOffset = lastPicture.map { ($0 &+ 1) &- id } ?? 0
        }
        if let tl0 = fields.tl0 {
            let value = payload[payload.startIndex + tl0]
            tl0Offset = lastTL0.map { ($0 &+ 1) &- value } ?? 0
        }
    }

    /// Rewrites the descriptor of the payload that starts at `start` in `packet` (the forwarded packet being
    /// written). A retransmission (`remember` false) is rewritten alike but does not count as the last one sent.
    public mutating func rewrite(_ packet: inout [UInt8], payloadAt start: Int, remember: Bool = true) {
        guard start < packet.count, let fields = Self.fields(packet[start...]) else { return }
        if let picture = fields.picture {
            let at = start + picture.offset
            if picture.long {
                let id = ((UInt16(packet[at] & 0x7F) << 8 | UInt16(packet[at + 1])) &+ pictureOffset) & 0x7FFF
                packet[at] = 0x80 | UInt8(id >> 8)
                packet[at + 1] = UInt8(id & 0xFF)
                if remember { lastPicture = id }
            } else {
                let id = (UInt16(packet[at] & 0x7F) &+ pictureOffset) & 0x7F
                packet[at] = UInt8(id)
                if remember { lastPicture = id }
            }
        }
        if let tl0 = fields.tl0 {
            packet[start + tl0] = packet[start + tl0] &+ tl0Offset
            if remember { lastTL0 = packet[start + tl0] }
        }
    }

    private static func readPicture(_ payload: ArraySlice<UInt8>, _ field: (offset: Int, long: Bool)) -> UInt16 {
        let at = payload.startIndex + field.offset
        return field.long ? UInt16(payload[at] & 0x7F) << 8 | UInt16(payload[at + 1]) : UInt16(payload[at] & 0x7F)
    }
}
