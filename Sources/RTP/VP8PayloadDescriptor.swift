/// The VP8 payload descriptor at the start of every VP8 RTP payload (RFC 7741 §4.2).
///
/// ```
///       0 1 2 3 4 5 6 7
///      +-+-+-+-+-+-+-+-+
///      |X|R|N|S|R| PID | (REQUIRED)
///      +-+-+-+-+-+-+-+-+
/// X:   |I|L|T|K| RSV   | (OPTIONAL)
///      +-+-+-+-+-+-+-+-+
/// I:   |M| PictureID   | (OPTIONAL)
///      +-+-+-+-+-+-+-+-+
/// M:   | PictureID     | (OPTIONAL, second byte of a 15-bit id)
///      +-+-+-+-+-+-+-+-+
/// L:   |   TL0PICIDX   | (OPTIONAL)
///      +-+-+-+-+-+-+-+-+
/// T/K: |TID|Y| KEYIDX  | (OPTIONAL)
///      +-+-+-+-+-+-+-+-+
/// ```
public struct VP8PayloadDescriptor: Equatable, Sendable {
    /// X: the extension byte is present.
    public var extended: Bool
    /// N: the frame can be discarded without affecting others.
    public var nonReference: Bool
    /// S: this packet starts a VP8 partition.
    public var startOfPartition: Bool
    /// PID: the partition index (0...7).
    public var partitionIndex: UInt8
    /// 7- or 15-bit picture id (I bit; M bit selects the long form).
    public var pictureID: UInt16?
    public var tl0PicIdx: UInt8?
    /// Temporal layer index and layer sync bit, present when T = 1.
    public var tid: UInt8?
    public var layerSync: Bool?
    /// Temporal key frame index, present when K = 1.
    public var keyIndex: UInt8?
    /// Bytes of descriptor before the VP8 payload.
    public var headerLength: Int

    /// Whether this packet starts a frame: S = 1 and partition 0 (RFC 7741 §4.4).
    public var startsFrame: Bool { startOfPartition && partitionIndex == 0 }

    public init(
        extended: Bool = false, nonReference: Bool = false, startOfPartition: Bool = false,
        partitionIndex: UInt8 = 0, pictureID: UInt16? = nil, tl0PicIdx: UInt8? = nil, tid: UInt8? = nil,
        layerSync: Bool? = nil, keyIndex: UInt8? = nil, headerLength: Int
    ) {
        self.extended = extended
        self.nonReference = nonReference
        self.startOfPartition = startOfPartition
        self.partitionIndex = partitionIndex
        self.pictureID = pictureID
        self.tl0PicIdx = tl0PicIdx
        self.tid = tid
        self.layerSync = layerSync
        self.keyIndex = keyIndex
        self.headerLength = headerLength
    }

    /// Parses the descriptor at the start of `payload`; at least one byte of VP8 data must follow it.
    public init(payload: [UInt8]) throws(RTPError) {
        guard let first = payload.first else { throw .emptyPayload }
        extended = first & 0x80 != 0
        nonReference = first & 0x20 != 0
        startOfPartition = first & 0x10 != 0
        partitionIndex = first & 0x07
        pictureID = nil
        tl0PicIdx = nil
        tid = nil
        layerSync = nil
        keyIndex = nil
        var offset = 1
        if extended {
            guard payload.count > offset else { throw .truncatedPayloadDescriptor }
            let flags = payload[offset]
            offset += 1
            if flags & 0x80 != 0 {  // I
                guard payload.count > offset else { throw .truncatedPayloadDescriptor }
                if payload[offset] & 0x80 != 0 {  // M: 15-bit picture id
                    guard payload.count > offset + 1 else { throw .truncatedPayloadDescriptor }
                    pictureID = UInt16(payload[offset] & 0x7F) << 8 | UInt16(payload[offset + 1])
                    offset += 2
                } else {
                    pictureID = UInt16(payload[offset])
                    offset += 1
                }
            }
            if flags & 0x40 != 0 {  // L
                guard payload.count > offset else { throw .truncatedPayloadDescriptor }
                tl0PicIdx = payload[offset]
                offset += 1
            }
            if flags & 0x30 != 0 {  // T or K: one shared byte
                guard payload.count > offset else { throw .truncatedPayloadDescriptor }
                let byte = payload[offset]
                if flags & 0x20 != 0 {
                    tid = byte >> 6
                    layerSync = byte & 0x20 != 0
                }
                if flags & 0x10 != 0 { keyIndex = byte & 0x1F }
                offset += 1
            }
        }
        // The descriptor alone, with no VP8 bytes after it, is not a valid payload (RFC 7741 §4.2).
        guard payload.count > offset else { throw .truncatedPayloadDescriptor }
        headerLength = offset
    }
}
