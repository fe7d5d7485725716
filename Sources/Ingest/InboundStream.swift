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
    /// Sequence numbers put into NACKs (repeats included), and keyframe requests (PLI/FIR) let
    /// through by the stream's `keyframeRequester`.
    public var nacksSent = 0
    public var plisRequested = 0
    /// Packets that arrived as answers to NACKs (RTX, or the same SSRC filling a NACKed gap).
    public var retransmissions = 0
    /// Smoothed NACK-to-retransmission round trip, once measured.
    public var roundTripMs: Int64?

    public init() {}
}

/// One inbound stream per SSRC: jitter buffer, then depacketizer, with counters and the RTCP
/// feedback decisions (reception reports, NACKs, keyframe requests; see InboundStream+Feedback).
///
/// NOT thread-safe: the owner (the participant's session) serialises every call, on one queue or
/// actor. That confinement is what makes the `@unchecked Sendable` sound.
public final class InboundStream: @unchecked Sendable {
    public let ssrc: UInt32
    public let payloadType: UInt8
    public let clockRate: Int

    /// Decides when a PLI/FIR may go out (at most one per its interval). The owner asks it on a
    /// decode error; `requestKeyframeIfNeeded` asks it for join and loss.
    public var keyframeRequester: KeyframeRequester
    /// RTP-to-wall-clock mapping from this source's sender reports.
    public internal(set) var senderClock: SenderClock

    private var depacketizer: any Depacketizer
    var buffer: JitterBuffer
    var counters = StreamStats()
    var reception: ReceptionStatistics
    /// nil unless created with `nack: true`.
    var nack: NackGenerator?
    private var droppedSeen = 0
    /// Packets the jitter buffer released during one call, handed back to it afterwards: reused so the
    /// packet path allocates nothing per packet (its capacity covers everything the buffer can hold).
    private var released: [ReleasedPacket] = []
    var sawKeyframe = false
    private var keyframeNeeded = true

    /// `capacity` bounds the packets held for reordering (256 covers 80 ms of a 30 Mbit/s stream).
    /// With `adaptive: false` the jitter buffer waits `maxDelayMs` for a gap; with `adaptive: true`
    /// `maxDelayMs` is ignored and the depth follows the measured jitter within `adaptiveDelay`.
    /// `nack: true` tracks missing packets for `nacks(nowMs:)`, and an adaptive depth then includes
    /// the NACK delay and round trip (`JitterBuffer.setRetransmissionAllowance`). Keyframe requests
    /// are spaced by at least `keyframeIntervalMs`.
    public init(
        ssrc: UInt32, payloadType: UInt8, clockRate: Int, depacketizer: any Depacketizer,
        maxDelayMs: Int64, capacity: Int = 256, adaptive: Bool = false,
        adaptiveDelay: AdaptiveDelay = .video, nack: Bool = false,
        nackConfiguration: NackConfiguration = NackConfiguration(), keyframeIntervalMs: Int64 = 500
    ) {
        self.ssrc = ssrc
        self.payloadType = payloadType
        self.clockRate = max(1, clockRate)
        self.depacketizer = depacketizer
        buffer =
            adaptive
            ? JitterBuffer(adaptive: adaptiveDelay, clockRate: clockRate, capacity: capacity)
            : JitterBuffer(fixedDelayMs: maxDelayMs, clockRate: clockRate, capacity: capacity)
        reception = ReceptionStatistics(ssrc: ssrc, clockRate: clockRate)
        self.nack = nack ? NackGenerator(configuration: nackConfiguration) : nil
        // The adaptive depth must leave room for a NACK and its answer, or every retransmission
        // would arrive after its gap was given up. A fixed depth stays as configured.
        if nack {
            buffer.setRetransmissionAllowance(
                Self.retransmissionAllowance(nackConfiguration, rttMs: nackConfiguration.rttMs))
        }
        released.reserveCapacity(max(1, capacity) + 2)
        keyframeRequester = KeyframeRequester(minIntervalMs: keyframeIntervalMs)
        senderClock = SenderClock(clockRate: clockRate)
    }

    /// Counters, merged with the reorder buffer's.
    public var stats: StreamStats {
        var s = counters
        let r = buffer.stats
        s.lost = r.lost
        s.duplicates = r.duplicates
        s.late = r.late
        s.reordered = r.reordered
        s.outOfRange = r.outOfRange
        s.resyncs = r.resyncs
        s.framesDropped = depacketizer.droppedFrames
        s.jitter = reception.jitter
        s.plisRequested = keyframeRequester.sent
        s.roundTripMs = nack?.measuredRttMs
        return s
    }

    /// True from the start until the first keyframe is emitted, and again after a frame was dropped
    /// or lost (the decoder's references are broken): the owner should send a PLI while it is true.
    public var needsKeyframe: Bool { keyframeNeeded }

    /// When `drain` should next be called, if packets are held behind a gap.
    public var nextDeadlineMs: Int64? { buffer.nextDeadlineMs }

    /// How long the jitter buffer currently waits for a gap (fixed, or adaptive).
    public var currentDelayMs: Int64 { buffer.currentDelayMs }

    /// `bytes` is the datagram's size for the byte counter. Packets with another SSRC or payload type
    /// are ignored (counted). `isRetransmission` marks packets unwrapped from an RFC 4588 RTX stream;
    /// a same-SSRC packet that fills a NACKed gap is recognised as one too. Retransmissions do not
    /// feed the jitter estimates, and timing them gives the round trip the NACK pacing and the
    /// jitter buffer's retransmission allowance use.
    public func receive(_ packet: RTPPacket, bytes: Int, nowMs: Int64, isRetransmission: Bool = false) -> [EncodedFrame]
    {
        var frames: [EncodedFrame] = []
        receive(packet, bytes: bytes, nowMs: nowMs, isRetransmission: isRetransmission) { frames.append($0) }
        return frames
    }

    /// `receive` for the hot path: each completed frame goes to `frame` as it is depacketized, instead of
    /// into a returned array, and the packet is copied into the jitter buffer's reused storage, so nothing
    /// is allocated per packet. A frame's `data` may share storage the stream reuses later: copy it to
    /// keep it beyond the call (a plain `let` copy is enough; writes then copy on write).
    public func receive(
        _ packet: RTPPacket, bytes: Int, nowMs: Int64, isRetransmission: Bool = false,
        frame: (EncodedFrame) -> Void
    ) {
        counters.lastPacketMs = nowMs
        guard packet.ssrc == ssrc else {
            counters.wrongSSRC += 1
            return
        }
        guard packet.payloadType == payloadType else {
            counters.wrongPayloadType += 1
            return
        }
        counters.packets += 1
        counters.bytes += max(0, bytes)
        let retransmitted =
            isRetransmission || (nack?.isAwaitingRetransmission(sequence: packet.sequenceNumber) ?? false)
        if retransmitted { counters.retransmissions += 1 }
        let resyncs = buffer.stats.resyncs
        buffer.insert(packet, nowMs: nowMs, measuresJitter: !retransmitted, into: &released)
        if buffer.stats.resyncs != resyncs {
            // The sender restarted its sequence: loss accounting and NACK tracking start over.
            reception.restartSequence()
            nack?.reset()
        }
        // Out-of-range jumps (no extended number) are not counted as received (RFC 3550 A.1).
        if let extended = buffer.lastExtendedSequence {
            reception.packetReceived(
                extendedSequence: extended, rtpTimestamp: packet.timestamp, arrivalMs: nowMs,
                measuresJitter: !retransmitted)
            // Mutated in place: a copy of the generator would copy its missing-packet list on every packet.
            let rttBefore = nack?.rttMs
            nack?.packetReceived(extendedSequence: extended, nowMs: nowMs)
            if let nack, nack.rttMs != rttBefore {
                buffer.setRetransmissionAllowance(Self.retransmissionAllowance(nack.configuration, rttMs: nack.rttMs))
            }
        }
        depacketizeReleased(frame)
    }

    /// Gives up gaps that waited too long; call on a timer (see `nextDeadlineMs`).
    public func drain(nowMs: Int64) -> [EncodedFrame] {
        var frames: [EncodedFrame] = []
        drain(nowMs: nowMs) { frames.append($0) }
        return frames
    }

    /// `drain` for the hot path: frames go to `frame` (see `receive(_:bytes:nowMs:isRetransmission:frame:)`).
    public func drain(nowMs: Int64, frame: (EncodedFrame) -> Void) {
        buffer.drain(nowMs: nowMs, into: &released)
        depacketizeReleased(frame)
    }

    /// Depacketizes what the jitter buffer released into `released`, then hands those packets back to it.
    private func depacketizeReleased(_ emit: (EncodedFrame) -> Void) {
        guard !released.isEmpty else { return }
        for i in released.indices {
            let item = released[i]
            if let frame = depacketizer.push(item.packet, afterLoss: item.afterLoss) { accept(frame, emit) }
            while let frame = depacketizer.takeReadyFrame() { accept(frame, emit) }
            // Checked after this push's frames: if a drop and a keyframe came together we ask for one
            // keyframe too many rather than risk missing the one we need.
            let dropped = depacketizer.droppedFrames
            if dropped != droppedSeen {
                droppedSeen = dropped
                keyframeNeeded = true
            }
        }
        // Frames have been consumed: the packets' storage is only referenced here again, and reusable.
        buffer.recycle(&released)
    }

    private func accept(_ frame: EncodedFrame, _ emit: (EncodedFrame) -> Void) {
        if frame.isKeyframe {
            counters.keyframes += 1
            sawKeyframe = true
            keyframeNeeded = false
        } else if !sawKeyframe {
            counters.framesBeforeFirstKeyframe += 1
            return
        }
        counters.framesEmitted += 1
        emit(frame)
    }
}
