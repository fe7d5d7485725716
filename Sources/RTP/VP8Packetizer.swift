/// Splits VP8 frames into RTP payloads (RFC 7741 §4): each payload is a 4-byte payload descriptor followed by
/// the next piece of the frame.
///
/// ```
///       0 1 2 3 4 5 6 7
///      +-+-+-+-+-+-+-+-+
///      |X|R|N|S|R| PID | X=1, S=1 on the frame's first packet, PID=0 (one partition run)
///      +-+-+-+-+-+-+-+-+
///      |I|L|T|K| RSV   | I=1: a picture ID follows
///      +-+-+-+-+-+-+-+-+
///      |M| PictureID   | M=1: 15-bit picture ID, so a receiver can tell which frame a loss hit
///      +-+-+-+-+-+-+-+-+
///      |   PictureID   |
///      +-+-+-+-+-+-+-+-+
/// ```
/// The pieces are as equal as the size allows, so no runt packet trails a frame.
public struct VP8Packetizer: Sendable {
    public static let descriptorSize = 4
    /// The largest payload (descriptor included).
    public let maxPayloadSize: Int
    /// The picture ID of the next frame (15 bits, wrapping).
    public private(set) var pictureID: UInt16

    public init(maxPayloadSize: Int = 1200, firstPictureID: UInt16 = UInt16.random(in: 0...0x7FFF)) {
        precondition(maxPayloadSize > Self.descriptorSize, "a payload must hold the descriptor and one byte")
        self.maxPayloadSize = maxPayloadSize
        pictureID = firstPictureID & 0x7FFF
    }

    /// Calls `emit` for each payload of `frame`, in order: its descriptor, its piece of the frame, and whether
    /// it is the frame's last (the RTP marker bit). An empty frame emits nothing.
    public mutating func packetize(
        _ frame: UnsafeRawBufferPointer,
        _ emit: (_ descriptor: (UInt8, UInt8, UInt8, UInt8), _ piece: UnsafeRawBufferPointer, _ last: Bool) -> Void
    ) {
        guard !frame.isEmpty else { return }
        let room = maxPayloadSize - Self.descriptorSize
        let count = (frame.count + room - 1) / room
        let base = frame.count / count
        let extra = frame.count % count
        let id = pictureID
        pictureID = (pictureID &+ 1) & 0x7FFF
        var offset = 0
        for i in 0..<count {
            let size = base + (i < extra ? 1 : 0)
            let descriptor: (UInt8, UInt8, UInt8, UInt8) = (
                i == 0 ? 0x90 : 0x80, 0x80, 0x80 | UInt8(id >> 8), UInt8(id & 0xFF)
            )
            emit(descriptor, UnsafeRawBufferPointer(rebasing: frame[offset..<(offset + size)]), i == count - 1)
            offset += size
        }
    }
}
