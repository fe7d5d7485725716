import Forwarding
import Foundation
import RTP

/// One sender's video as the forwarding sees it: while slots show it, every packet (after RTX is unwrapped) goes into
/// a history for receivers' NACKs and to those slots, as it arrives, before any jitter buffer. Keyframe
/// wishes of all those slots are coalesced here into at most one request per 300 ms, which the sender's feedback
/// takes. Packets come on the UDP thread; slots attach and detach from the room's queue: behind `lock`, taken
/// before a slot's own.
final class VideoForwarder: @unchecked Sendable {
    let key: StreamKey
    /// The sender's SSRC as Cohost registered it (a stand-in's too): the rewriters' source id.
    let ssrc: UInt32
    /// `ForwardCodec.key` of what the sender sends.
    let codec: String
    let isVP8: Bool
    /// The simulcast layer this forwards (nil for a single stream).
    let rid: String?

    private let lock = NSLock()
    private var history = ForwardHistory()
    private var slots: [ForwardSlot] = []
    private var keyframes = KeyframeCoalescer()
    private var bytesIn = 0
    private var bytesAtLastRate = 0
    private var rateBps = 0

    init(key: StreamKey, ssrc: UInt32, codec: ForwardCodec, rid: String? = nil) {
        self.rid = rid
        self.key = key
        self.ssrc = ssrc
        self.codec = codec.key
        isVP8 = codec == .vp8
    }

    /// One packet of the stream (the sender's UDP thread).
    func forward(_ packet: RTPPacket, nowMs: Int64) {
        lock.lock()
        defer { lock.unlock() }
        bytesIn += packet.payload.count
        // Nobody watching: no copy. A slot that attaches starts at a keyframe, so it never NACKs what came before.
        guard !slots.isEmpty else { return }
        history.record(
            sequence: packet.sequenceNumber, timestamp: packet.timestamp, marker: packet.marker,
            payloadType: packet.payloadType, payload: packet.payload[...])
        let keyframe = isVP8 ? ForwardedKeyframe.vp8(packet.payload[...]) : ForwardedKeyframe.h264(packet.payload[...])
        for slot in slots { slot.forward(packet, codec: codec, keyframe: keyframe, vp8: isVP8, nowMs: nowMs) }
    }

    /// Packets of the history again, to one slot: `lost` pairs the source's numbers with the slot's.
    func retransmit(_ lost: [(original: UInt16, sent: UInt16)], to slot: ForwardSlot) {
        lock.lock()
        defer { lock.unlock() }
        for (original, sent) in lost {
            history.withPacket(original) { slot.resend($0, as: sent, codec: codec, vp8: isVP8) }
        }
    }

    func attach(_ slot: ForwardSlot) {
        lock.withLock {
            guard !slots.contains(where: { $0 === slot }) else { return }
            slots.append(slot)
            keyframes.want()
        }
    }

    func detach(_ slot: ForwardSlot) { lock.withLock { slots.removeAll { $0 === slot } } }

    var subscriberCount: Int { lock.withLock { slots.count } }

    func requestKeyframe() { lock.withLock { keyframes.want() } }

    /// Whether the sender's feedback asks for a keyframe now on the slots' behalf (the room's queue).
    func takeKeyframeRequest(nowMs: Int64) -> Bool { lock.withLock { keyframes.take(nowMs: nowMs) } }

    var keyframeRequests: (wishes: Int, sent: Int) { lock.withLock { (keyframes.wishes, keyframes.requests) } }

    /// The payload bitrate over the last `elapsedMs` (once a second, the room's queue): what a slot showing it costs.
    func measure(elapsedMs: Int64) -> Int {
        lock.withLock {
            rateBps = Int(Int64(bytesIn - bytesAtLastRate) * 8_000 / max(1, elapsedMs))
            bytesAtLastRate = bytesIn
            return rateBps
        }
    }

    var bitrateBps: Int { lock.withLock { rateBps } }
}
