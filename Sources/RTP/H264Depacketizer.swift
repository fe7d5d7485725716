/// Reassembles H.264 access units from RTP packets (RFC 6184, packetization-mode 1) into Annex-B
/// byte streams: a 4-byte start code `00 00 00 01` before every NAL unit, as decoders take them.
///
/// An access unit is every packet with one RTP timestamp; it ends at the marker bit, or when a packet
/// with a new timestamp arrives (for senders that omit the marker). Single NAL unit packets, STAP-A
/// and FU-A are understood. An access unit with a loss inside it (`afterLoss`, or an FU-A whose start,
/// or end is missing), a malformed or interleaved-mode packet, or more than `maxAccessUnitBytes` bytes
/// or `maxNALUnits` NAL units is dropped and counted, and the rest of its packets are skipped.
/// After a loss, a new access unit is only taken if it visibly starts at its beginning (a parameter
/// set, SEI or delimiter, or a slice with first_mb_in_slice = 0); otherwise its head was lost too.
public struct H264Depacketizer: Depacketizer {
    /// Far above any real access unit at conference resolutions; bounds memory per stream.
    public static let defaultMaxAccessUnitBytes = 4 * 1024 * 1024
    /// Encoders use a handful of slices per picture; thousands would only come from a hostile sender.
    public static let defaultMaxNALUnits = 1024

    public let maxAccessUnitBytes: Int
    public let maxNALUnits: Int
    public private(set) var droppedFrames = 0
    /// Packets refused as malformed or of an unsupported type (their access units count in `droppedFrames`).
    public private(set) var droppedPackets = 0

    private enum State { case idle, assembling, skipping }
    private static let startCode: [UInt8] = [0, 0, 0, 1]

    private var state = State.idle
    /// The access unit being assembled; cleared with its capacity kept, so appends rarely reallocate.
    private var buffer: [UInt8] = []
    /// The previous access unit's storage: `closeAccessUnit` hands `buffer` out in the frame and swaps this one in, so
    /// the next access unit is assembled in storage nobody else holds (hot path: no allocation per frame once the
    /// consumer has dropped the frame it was given, as the decoder does before the one after next).
    private var spare: [UInt8] = []
    private var nalUnits = 0
    private var timestamp: UInt32 = 0
    private var keyframe = false
    private var lossBefore = false
    /// The type of the FU-A NAL unit whose end has not arrived yet.
    private var openFragmentType: UInt8?
    /// Whether the access unit before the current one was delivered (so a gap after it lost whole units).
    private var lastDelivered = true
    private var ready: EncodedFrame?

    public init(
        maxAccessUnitBytes: Int = H264Depacketizer.defaultMaxAccessUnitBytes,
        maxNALUnits: Int = H264Depacketizer.defaultMaxNALUnits
    ) {
        self.maxAccessUnitBytes = maxAccessUnitBytes
        self.maxNALUnits = maxNALUnits
        buffer.reserveCapacity(64 * 1024)
        spare.reserveCapacity(64 * 1024)
    }

    public mutating func push(_ packet: RTPPacket, afterLoss: Bool) -> EncodedFrame? {
        var finished: EncodedFrame?
        if state != .idle && packet.timestamp != timestamp {
            // A new timestamp closes the unit in progress: complete unless its tail may have been lost.
            if state == .assembling {
                if afterLoss || openFragmentType != nil { dropAccessUnit() } else { finished = closeAccessUnit() }
            }
            state = .idle
        } else if state == .assembling && afterLoss {
            dropAccessUnit()  // lost packets inside this access unit
            state = .skipping
        }

        let payload: H264Payload
        do {
            payload = try H264Payload(payload: packet.payload)
        } catch {
            droppedPackets += 1
            switch state {
            case .assembling: dropAccessUnit()
            case .idle:
                droppedFrames += 1
                lastDelivered = false  // this timestamp's unit lost a packet
            case .skipping: break
            }
            enterSkipping(packet)
            return finished
        }

        if state == .idle {
            if afterLoss {
                let clean = Self.startsAccessUnit(packet.payload, payload)
                // A gap after a delivered unit lost whole units; a unit without its start is lost too.
                if lastDelivered || !clean { droppedFrames += 1 }
                guard clean else {
                    lastDelivered = false
                    enterSkipping(packet)
                    return finished
                }
            }
            startAccessUnit(packet.timestamp, afterLoss: afterLoss)
        }
        if state == .assembling && !append(payload, packet.payload) {
            dropAccessUnit()
            state = .skipping
        }
        if packet.marker {
            if state == .assembling {
                if openFragmentType != nil {
                    dropAccessUnit()  // the marker packet should have ended the FU-A
                } else if nalUnits > 0 {
                    let unit = closeAccessUnit()
                    if finished == nil { finished = unit } else { ready = unit }
                }
            }
            state = .idle
        }
        return finished
    }

    public mutating func takeReadyFrame() -> EncodedFrame? {
        defer { ready = nil }
        return ready
    }

    /// Appends the packet's NAL units; false when the access unit is broken or too large.
    private mutating func append(_ structure: H264Payload, _ payload: [UInt8]) -> Bool {
        switch structure {
        case .single:
            guard openFragmentType == nil else { return false }  // the open FU-A's end is missing
            return appendNALUnit(payload[...])
        case .aggregation(let units):
            guard openFragmentType == nil else { return false }
            for unit in units where !appendNALUnit(payload[unit]) { return false }
            return true
        case .fragment(let fragment):
            if fragment.start {
                guard openFragmentType == nil else { return false }
                guard appendNALUnit([fragment.nalHeader][...]) else { return false }
                openFragmentType = fragment.nalType
            } else {
                // A middle or end piece needs the start of the same NAL unit before it.
                guard openFragmentType == fragment.nalType else { return false }
                if fragment.end { openFragmentType = nil }
            }
            guard buffer.count + fragment.data.count <= maxAccessUnitBytes else { return false }
            buffer.append(contentsOf: payload[fragment.data])
            return true
        }
    }

    /// Appends a start code and a whole NAL unit (or the header of a fragmented one).
    private mutating func appendNALUnit(_ nal: ArraySlice<UInt8>) -> Bool {
        guard nalUnits < maxNALUnits, buffer.count + 4 + nal.count <= maxAccessUnitBytes,
            let header = nal.first
        else { return false }
        buffer.append(contentsOf: Self.startCode)
        buffer.append(contentsOf: nal)
        nalUnits += 1
        if header & 0x1F == H264Payload.idrSlice { keyframe = true }
        return true
    }

    /// Whether the packet visibly begins an access unit: its first NAL unit is one that may open an
    /// access unit (H.264 §7.4.1.2.3: SEI, parameter sets, delimiter, types 14–18), or the first slice
    /// of the picture (first_mb_in_slice, the slice header's first ue(v), is 0: a lone 1 bit).
    static func startsAccessUnit(_ payload: [UInt8], _ structure: H264Payload) -> Bool {
        let header: UInt8, firstByte: UInt8?
        switch structure {
        case .single:
            header = payload[0]
            firstByte = payload.count > 1 ? payload[1] : nil
        case .aggregation(let units):
            guard let unit = units.first else { return false }
            header = payload[unit.lowerBound]
            firstByte = unit.count > 1 ? payload[unit.lowerBound + 1] : nil
        case .fragment(let fragment):
            guard fragment.start else { return false }
            header = fragment.nalHeader
            firstByte = fragment.data.isEmpty ? nil : payload[fragment.data.lowerBound]
        }
        switch header & 0x1F {
        case 1, 2, 5: return firstByte.map { $0 & 0x80 != 0 } ?? false
        case 6, 7, 8, 9, 14...18: return true
        // Partitions B and C (3, 4), end of sequence or stream (10, 11), filler (12), SPS extension (13),
        // auxiliary and extension slices (19–21) only follow an access unit's start; the rest are unspecified.
        default: return false
        }
    }

    private mutating func startAccessUnit(_ ts: UInt32, afterLoss: Bool) {
        state = .assembling
        timestamp = ts
        buffer.removeAll(keepingCapacity: true)
        nalUnits = 0
        keyframe = false
        lossBefore = afterLoss
        openFragmentType = nil
    }

    /// Skips the rest of this packet's access unit (or nothing more, when the packet carries its marker).
    private mutating func enterSkipping(_ packet: RTPPacket) {
        state = packet.marker ? .idle : .skipping
        timestamp = packet.timestamp
    }

    private mutating func closeAccessUnit() -> EncodedFrame {
        state = .idle
        lastDelivered = true
        let frame = EncodedFrame(
            data: buffer, rtpTimestamp: timestamp, isKeyframe: keyframe, precededByLoss: lossBefore)
        swap(&buffer, &spare)
        return frame
    }

    private mutating func dropAccessUnit() {
        state = .idle
        openFragmentType = nil
        lastDelivered = false
        droppedFrames += 1
    }
}
