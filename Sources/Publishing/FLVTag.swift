/// One FLV tag (FLV spec v10.1, E.4.1): what RTMP carries as one message and a file stores after its header.
public struct FLVTag: Sendable, Equatable {
    public enum Kind: UInt8, Sendable {
        case audio = 8
        case video = 9
        case script = 18
    }

    /// The largest body the 24-bit DataSize field can describe.
    public static let maxBodySize = 0xFF_FFFF

    public var kind: Kind
    /// Decode timestamp in milliseconds, shared by audio and video.
    public var timestampMs: UInt32
    /// The tag data after the 11-byte header (AudioTagHeader/VideoTagHeader + payload, or AMF0 values).
    public var body: [UInt8]
    /// True for video keyframes and for everything that does not depend on an earlier tag
    /// (sequence headers, script tags, audio): the drop policy may start a stream at such a tag.
    public var isKeyframe: Bool
    /// True for the AVC decoder configuration and the AAC AudioSpecificConfig tags.
    public var isSequenceHeader: Bool
    /// How far `timestampMs` runs ahead of the programme clock at the time the tag was made (the video
    /// lead; 0 for audio and data). Not written to the wire: output queues subtract it, so pictures stamped
    /// ahead of their sound are not counted as queued media.
    public var leadMs: UInt32 = 0

    public init(kind: Kind, timestampMs: UInt32, body: [UInt8], isKeyframe: Bool, isSequenceHeader: Bool) {
        self.kind = kind
        self.timestampMs = timestampMs
        self.body = body
        self.isKeyframe = isKeyframe
        self.isSequenceHeader = isSequenceHeader
    }

    /// Equal when the bytes on the wire are: `leadMs` is bookkeeping, not content.
    public static func == (lhs: FLVTag, rhs: FLVTag) -> Bool {
        lhs.kind == rhs.kind && lhs.timestampMs == rhs.timestampMs && lhs.body == rhs.body
            && lhs.isKeyframe == rhs.isKeyframe && lhs.isSequenceHeader == rhs.isSequenceHeader
    }

    /// Number of bytes `serialized()` produces.
    public var serializedSize: Int { 11 + body.count + 4 }

    /// 11-byte header + body + 4-byte PreviousTagSize (what RTMP_Write and files take).
    ///
    /// Bodies over `maxBodySize` cannot be described; outputs refuse such tags before serialising.
    public func serialized() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(serializedSize)
        appendSerialized(to: &out)
        return out
    }

    /// Appends the serialised tag to `out`, so a caller can reuse one buffer per tag.
    public func appendSerialized(to out: inout [UInt8]) {
        let size = UInt32(min(body.count, Self.maxBodySize))
        out.append(kind.rawValue)
        out.append(UInt8(size >> 16 & 0xFF))
        out.append(UInt8(size >> 8 & 0xFF))
        out.append(UInt8(size & 0xFF))
        // Timestamp: lower 24 bits big-endian, then the extended (upper) byte.
        out.append(UInt8(timestampMs >> 16 & 0xFF))
        out.append(UInt8(timestampMs >> 8 & 0xFF))
        out.append(UInt8(timestampMs & 0xFF))
        out.append(UInt8(timestampMs >> 24))
        out.append(contentsOf: [0, 0, 0])  // StreamID, always 0
        out.append(contentsOf: body)
        let previousTagSize = UInt32(11) + size
        out.append(UInt8(previousTagSize >> 24))
        out.append(UInt8(previousTagSize >> 16 & 0xFF))
        out.append(UInt8(previousTagSize >> 8 & 0xFF))
        out.append(UInt8(previousTagSize & 0xFF))
    }

    /// Video that is neither a sequence header nor a keyframe: useless without the frames before it.
    var isDependentVideo: Bool { kind == .video && !isSequenceHeader && !isKeyframe }

    /// A script tag whose first value is the string "onMetaData".
    var isMetadata: Bool {
        kind == .script && body.starts(with: FLVTag.onMetaDataPrefix)
    }

    /// AMF0 string marker, 16-bit length 10, "onMetaData".
    static let onMetaDataPrefix: [UInt8] = [0x02, 0x00, 0x0A] + Array("onMetaData".utf8)
}
