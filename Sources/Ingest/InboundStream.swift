import RTP

/// Counters of one inbound stream.
public struct StreamStats: Equatable, Sendable {
    /// Packets with this stream's SSRC and payload type, and their UDP payload bytes.
    public var packets = 0
    public var bytes = 0
    public var lost = 0
    public var duplicates = 0
    public var late = 0
    public var reordered = 0
    /// Packets dropped for a sequence jump (or accepted as a sender restart: `resyncs`).
    public var outOfRange = 0
    public var resyncs = 0
    public var wrongPayloadType = 0
    public var wrongSSRC = 0
    public var framesEmitted = 0
    public var keyframes = 0
    /// Frames dropped by the depacketizer for loss, corruption or size.
    public var framesDropped = 0
    /// Non-key frames discarded because no keyframe had arrived yet (a decoder cannot use them).
    public var framesBeforeFirstKeyframe = 0
    /// Interarrival jitter (RFC 3550 §6.4.1, A.8) in RTP timestamp units.
    public var jitter: Double = 0
    /// Arrival time of the last packet for this SSRC, whatever its payload type.
    public var lastPacketMs: Int64?

    public init() {}
}

/// One inbound stream per SSRC: reorder buffer, then depacketizer, with counters.
///
/// NOT thread-safe: the owner (the participant's session) serialises every call, on one queue or
/// actor. That confinement is what makes the `@unchecked Sendable` sound.
public final class InboundStream: @unchecked Sendable {
    public let ssrc: UInt32
    public let payloadType: UInt8
    public let clockRate: Int

    private var depacketizer: any Depacketizer
    private var reorder: ReorderBuffer
    private var counters = StreamStats()
    private var droppedSeen = 0
    private var sawKeyframe = false
    private var keyframeNeeded = true
    private var lastArrivalUnits: Int64?
    private var lastTimestamp: UInt32 = 0

    /// `capacity` bounds the packets held for reordering (256 covers 80 ms of a 30 Mbit/s stream).
    public init(ssrc: UInt32, payloadType: UInt8, clockRate: Int, depacketizer: any Depacketizer,
                maxDelayMs: Int64, capacity: Int = 256) {
        self.ssrc = ssrc
        self.payloadType = payloadType
        self.clockRate = max(1, clockRate)
        self.depacketizer = depacketizer
        reorder = ReorderBuffer(maxDelayMs: maxDelayMs, capacity: capacity)
    }

    /// Counters, merged with the reorder buffer's.
    public var stats: StreamStats {
        var s = counters
        let r = reorder.stats
        s.lost = r.lost
        s.duplicates = r.duplicates
        s.late = r.late
        s.reordered = r.reordered
        s.outOfRange = r.outOfRange
        s.resyncs = r.resyncs
        s.framesDropped = depacketizer.droppedFrames
        return s
    }

    /// True from the start until the first keyframe is emitted, and again after a frame was dropped
    /// or lost (the decoder's references are broken): the owner should send a PLI while it is true.
    public var needsKeyframe: Bool { keyframeNeeded }

    /// When `drain` should next be called, if packets are held behind a gap.
    public var nextDeadlineMs: Int64? { reorder.nextDeadlineMs }

    /// `bytes` is the datagram's size for the byte counter. Packets with another SSRC or payload type
    /// are ignored (counted).
    public func receive(_ packet: RTPPacket, bytes: Int, nowMs: Int64) -> [EncodedFrame] {
        counters.lastPacketMs = nowMs
        guard packet.ssrc == ssrc else { counters.wrongSSRC += 1; return [] }
        guard packet.payloadType == payloadType else { counters.wrongPayloadType += 1; return [] }
        counters.packets += 1
        counters.bytes += max(0, bytes)
        updateJitter(packet.timestamp, nowMs: nowMs)
        return depacketize(reorder.insert(packet, nowMs: nowMs))
    }

    /// Gives up gaps that waited too long; call on a timer (see `nextDeadlineMs`).
    public func drain(nowMs: Int64) -> [EncodedFrame] {
        depacketize(reorder.drain(nowMs: nowMs))
    }

    /// RFC 3550 A.8: J += (|D| - J) / 16, D the change in transit time, in timestamp units.
    private func updateJitter(_ timestamp: UInt32, nowMs: Int64) {
        let arrival = nowMs * Int64(clockRate) / 1000
        if let last = lastArrivalUnits {
            let d = (arrival - last) - Int64(Int32(bitPattern: timestamp &- lastTimestamp))
            counters.jitter += (Double(abs(d)) - counters.jitter) / 16
        }
        lastArrivalUnits = arrival
        lastTimestamp = timestamp
    }

    private func depacketize(_ released: [ReleasedPacket]) -> [EncodedFrame] {
        var frames: [EncodedFrame] = []
        for item in released {
            if let frame = depacketizer.push(item.packet, afterLoss: item.afterLoss) { accept(frame, into: &frames) }
            while let frame = depacketizer.takeReadyFrame() { accept(frame, into: &frames) }
            // Checked after this push's frames: if a drop and a keyframe came together we ask for one
            // keyframe too many rather than risk missing the one we need.
            let dropped = depacketizer.droppedFrames
            if dropped != droppedSeen {
                droppedSeen = dropped
                keyframeNeeded = true
            }
        }
        return frames
    }

    private func accept(_ frame: EncodedFrame, into frames: inout [EncodedFrame]) {
        if frame.isKeyframe {
            counters.keyframes += 1
            sawKeyframe = true
            keyframeNeeded = false
        } else if !sawKeyframe {
            counters.framesBeforeFirstKeyframe += 1
            return
        }
        counters.framesEmitted += 1
        frames.append(frame)
    }
}
