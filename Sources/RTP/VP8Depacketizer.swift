/// Reassembles VP8 frames from RTP packets (RFC 7741).
///
/// A frame starts at a packet with S = 1 and partition index 0 and ends at the marker bit, or when a
/// packet with a new timestamp arrives (for senders that omit the marker). A frame with a loss inside
/// it, or whose end may have been lost, is dropped rather than handed to the decoder half-built;
/// packets after a drop are skipped until the next frame start. Frames above `maxFrameBytes` are dropped.
public struct VP8Depacketizer: Depacketizer {
    /// Far above any real VP8 frame at conference resolutions; bounds memory per stream.
    public static let defaultMaxFrameBytes = 4 * 1024 * 1024

    public let maxFrameBytes: Int
    public private(set) var droppedFrames = 0

    /// The frame being assembled; cleared with its capacity kept, so appends rarely reallocate.
    private var buffer: [UInt8] = []
    /// The previous frame's storage: `closeFrame` hands `buffer` out in the frame and swaps this one in, so
    /// the next frame is assembled in storage nobody else holds (hot path: no allocation per frame once the
    /// consumer has dropped the frame it was given, as the decoder does before the one after next).
    private var spare: [UInt8] = []
    private var assembling = false
    private var timestamp: UInt32 = 0
    private var keyframe = false
    private var lossBefore = false
    private var ready: EncodedFrame?

    public init(maxFrameBytes: Int = VP8Depacketizer.defaultMaxFrameBytes) {
        self.maxFrameBytes = maxFrameBytes
        buffer.reserveCapacity(64 * 1024)
        spare.reserveCapacity(64 * 1024)
    }

    public mutating func push(_ packet: RTPPacket, afterLoss: Bool) -> EncodedFrame? {
        var finished: EncodedFrame?
        if assembling && packet.timestamp != timestamp {
            // A new timestamp closes the frame in progress: complete unless its tail may have been lost.
            if afterLoss { dropFrame() } else { finished = closeFrame() }
        } else if assembling && afterLoss {
            dropFrame()  // lost packets inside this frame
        } else if !assembling && afterLoss {
            droppedFrames += 1  // whole frames (or a frame start) may be gone
        }

        guard let descriptor = try? VP8PayloadDescriptor(payload: packet.payload) else {
            if assembling { dropFrame() }
            return finished
        }
        let data = packet.payload[descriptor.headerLength...]
        if descriptor.startsFrame {
            if assembling { dropFrame() }  // a second start for the same timestamp: the first is incomplete
            assembling = true
            timestamp = packet.timestamp
            buffer.removeAll(keepingCapacity: true)
            // VP8 payload header (RFC 7741 §4.3): P bit (lowest of the first byte) is 0 for key frames.
            keyframe = data.first.map { $0 & 0x01 == 0 } ?? false
            lossBefore = afterLoss
        } else if !assembling {
            return finished  // a continuation without its start: wait for the next frame
        }
        guard buffer.count + data.count <= maxFrameBytes else {
            dropFrame()
            return finished
        }
        buffer.append(contentsOf: data)
        if packet.marker {
            let frame = closeFrame()
            if finished == nil { return frame }
            ready = frame
        }
        return finished
    }

    public mutating func takeReadyFrame() -> EncodedFrame? {
        defer { ready = nil }
        return ready
    }

    private mutating func closeFrame() -> EncodedFrame {
        assembling = false
        let frame = EncodedFrame(
            data: buffer, rtpTimestamp: timestamp, isKeyframe: keyframe, precededByLoss: lossBefore)
        swap(&buffer, &spare)
        return frame
    }

    private mutating func dropFrame() {
        assembling = false
        droppedFrames += 1
    }
}
