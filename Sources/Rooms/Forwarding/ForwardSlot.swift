import Forwarding
import Foundation
import RTP
import SRTP

/// One receive slot of one participant: the stream Cohost sends on that `m=` line, made of the packets of whichever
/// sender the slot shows (`VideoForwarder`), rewritten by a `SlotRewriter` (and a `VP8Munger`) into one continuous
/// stream, protected and sent. Packets come on the UDP thread of their sender, reports and NACKs on the UDP thread
/// of the receiver, what to show and whether to send from the room's queue: everything behind `lock`, which is
/// never held while taking a forwarder's (a forwarder calls in with its own held).
final class ForwardSlot: @unchecked Sendable {
    let mid: String
    let ssrc: UInt32
    let offer: SlotOffer
    /// The payload type each sender codec (`ForwardCodec.key`) goes out with, built once: the per-packet lookup
    /// allocates nothing.
    private let payloadTypes: [String: UInt8]
    /// What the receiver reports about this slot (loss, round trip, REMB).
    let feedback = ReceiverFeedback(clockRate: 90_000)
    /// The participant this slot sends to; set once when it is made.
    weak var owner: Participant?
    /// Resent packets a second at most, whatever a receiver NACKs.
    static let retransmissionsPerSecond = 300

    private let lock = NSLock()
    private var state: State
    // Apart from `state`: each is passed inout while another is read (exclusivity is per stored property).
    private var rewriter: SlotRewriter
    private var munger = VP8Munger()
    private var plain: [UInt8] = []
    private var protected: [UInt8] = []
    private var reportBuffer: [UInt8] = []
    private var lost: [(original: UInt16, sent: UInt16)] = []
    private let lateKeys: TransportKeys?
    private let sourceDescription: [UInt8]

    /// A slot's state as the API shows it.
    struct Report: Sendable {
        var mid: String
        var shown: StreamKey?
        var paused: Bool
        var packets: Int
        var bytes: Int
        var retransmitted: Int
        var nacksReceived: Int
        var keyframeRequests: Int
        var switches: Int
        var bitrateBps: Int
    }

    private struct State {
        var srtp: SRTPSession?
        var shown: StreamKey?
        weak var source: VideoForwarder?
        /// Another layer of the same stream, taken over at its next keyframe; until then `source` goes on.
        weak var next: VideoForwarder?
        /// Layers this slot no longer takes, for the director to detach it from (not from here: a forwarder calls
        /// in with its own lock held).
        var retired: [VideoForwarder] = []
        var transport: (@Sendable (Participant, [UInt8]) -> Void)?
        var paused = false
        var lastTimestamp: UInt32?
        var lastSentMs: Int64 = 0
        var packets = 0
        var bytes = 0
        var octets = 0
        var retransmitted = 0
        var nacksReceived = 0
        var keyframeRequests = 0
        var retransmissionBudget = ForwardSlot.retransmissionsPerSecond
        var bitrateBps = 0
        var bytesAtLastRate = 0
    }

    init(_ offer: SlotOffer, cname: String, lateKeys: TransportKeys?) throws(SRTPError) {
        mid = offer.mid
        ssrc = offer.ssrc
        self.offer = offer
        var types: [String: UInt8] = [:]
        for format in offer.formats {
            for key in format.codec.accepts where types[key] == nil { types[key] = format.payloadType }
        }
        payloadTypes = types
        self.lateKeys = lateKeys
        rewriter = SlotRewriter(
            initialSequence: .random(in: 0...UInt16.max), initialTimestamp: .random(in: 0...UInt32.max))
        var state = State()
        if let keys = offer.srtp {
            state.srtp = try SRTPSession(profile: keys.profile, masterKeyAndSalt: keys.key, direction: .outbound)
        }
        plain.reserveCapacity(1500)
        protected.reserveCapacity(1500)
        lost.reserveCapacity(64)
        self.state = state
        sourceDescription = SourceDescription(chunks: [
            .init(
                source: offer.ssrc,
                items: [.init(type: SourceDescription.Item.cnameType, value: Array(cname.utf8.prefix(255)))])
        ]).serialized()
    }

    /// The stream shown now.
    var shown: StreamKey? { lock.withLock { state.shown } }

    /// Shows `key` from `source`'s next keyframe on (nil: nothing), through `transport`. Room's queue. Returns the
    /// forwarder shown until now, which the caller detaches this slot from.
    func show(
        _ key: StreamKey?, from source: VideoForwarder?, transport: @escaping @Sendable (Participant, [UInt8]) -> Void
    )
        -> VideoForwarder?
    {
        lock.withLock {
            let previous = state.source
            if let next = state.next { state.retired.append(next) }
            state.next = nil
            state.shown = key
            state.source = source
            state.transport = transport
            rewriter.show(source.map(\.ssrc))
            return previous === source ? nil : previous
        }
    }

    var source: VideoForwarder? { lock.withLock { state.source } }
    /// The layer the slot moves to at its next keyframe.
    var nextLayer: VideoForwarder? { lock.withLock { state.next } }

    /// Takes another layer of the stream shown: from its next keyframe on when the slot is sending (the current
    /// layer goes on until then), at once otherwise. Room's queue. True when the caller should attach the slot to
    /// `layer`.
    func switchLayer(to layer: VideoForwarder) -> Bool {
        lock.withLock {
            if state.source === layer {
                if let next = state.next { state.retired.append(next) }
                state.next = nil
                return false
            }
            guard state.next !== layer else { return false }
            if let next = state.next { state.retired.append(next) }
            if rewriter.started && !state.paused {
                state.next = layer
            } else {
                if let source = state.source { state.retired.append(source) }
                state.next = nil
                state.source = layer
                rewriter.show(layer.ssrc)
            }
            return true
        }
    }

    /// The layers to detach this slot from: no longer its source or its next one.
    func takeRetired() -> [VideoForwarder] {
        lock.withLock {
            guard !state.retired.isEmpty else { return [] }
            let keep = [state.source, state.next]
            let retired = state.retired.filter { r in !keep.contains { $0 === r } }
            state.retired.removeAll()
            return retired
        }
    }

    /// Stops sending (the receiver cannot take it) or starts again from the source's next keyframe. Says whether
    /// it changed.
    func setPaused(_ paused: Bool) -> Bool {
        lock.withLock {
            guard state.paused != paused else { return false }
            state.paused = paused
            if !paused { rewriter.restart() }
            return true
        }
    }

    var isPaused: Bool { lock.withLock { state.paused } }

    /// Whether the slot shows a source and waits for its keyframe (a sender may ignore a request that came too soon
    /// after its last keyframe, as libwebrtc does within 300 ms: the wish is renewed until one comes).
    var awaitsKeyframe: Bool { lock.withLock { state.source != nil && !state.paused && !rewriter.started } }

    // MARK: the sender's UDP thread (its forwarder's lock held)

    /// One packet of the source: rewritten and sent when the slot shows it, and not paused.
    func forward(_ packet: RTPPacket, codec: String, keyframe: Bool, vp8: Bool, nowMs: Int64) {
        lock.lock()
        defer { lock.unlock() }
        guard !state.paused, let pt = payloadTypes[codec] else { return }
        if let next = state.next, packet.ssrc == next.ssrc {
            // The layer switched to begins at its keyframe; the one before it stops there.
            guard keyframe else { return }
            if let source = state.source { state.retired.append(source) }
            state.source = next
            state.next = nil
            rewriter.show(next.ssrc)
        }
        let starting = !rewriter.started
        guard
            let out = rewriter.rewrite(
                source: packet.ssrc, sequence: packet.sequenceNumber, timestamp: packet.timestamp,
                startsKeyframe: keyframe, nowMs: nowMs)
        else { return }
        if starting && vp8 { munger.restart(at: packet.payload[...]) }
        RTPPacket.write(
            payloadType: pt, marker: packet.marker, sequenceNumber: out.sequence, timestamp: out.timestamp, ssrc: ssrc,
            payload: packet.payload[...], into: &plain)
        if vp8 { munger.rewrite(&plain, payloadAt: 12) }
        state.lastTimestamp = out.timestamp
        state.lastSentMs = nowMs
        transmit(payloadBytes: packet.payload.count)
    }

    /// A packet of the source's history again, as sequence number `sent` (a NACK's answer).
    func resend(_ entry: ForwardHistory.Entry, as sent: UInt16, codec: String, vp8: Bool) {
        lock.lock()
        defer { lock.unlock() }
        guard let pt = payloadTypes[codec] else { return }
        RTPPacket.write(
            payloadType: pt, marker: entry.marker, sequenceNumber: sent,
            timestamp: rewriter.rewritten(timestamp: entry.timestamp), ssrc: ssrc, payload: entry.payload[...],
            into: &plain)
        if vp8 { munger.rewrite(&plain, payloadAt: 12, remember: false) }
        state.retransmitted += 1
        transmit(payloadBytes: 0)
    }

    /// Protects `plain` and sends it (lock held).
    private func transmit(payloadBytes: Int) {
        guard let owner, let transport = state.transport, keyed() else { return }
        if let srtp = state.srtp {
            do { try srtp.protectRTP(plain, into: &protected) } catch { return }
            transport(owner, protected)
            state.bytes += protected.count
        } else {
            transport(owner, plain)
            state.bytes += plain.count
        }
        state.packets += 1
        state.octets += payloadBytes
    }

    /// Whether the slot may send: a WebRTC receiver's keys come with its handshake (lock held).
    private func keyed() -> Bool {
        guard state.srtp == nil, let lateKeys else { return true }
        state.srtp = lateKeys.session(.outbound)
        return state.srtp != nil
    }

    // MARK: the receiver's UDP thread

    /// A PLI or FIR about this slot: the source is asked for a keyframe (coalesced there).
    func requestKeyframe() {
        let source = lock.withLock {
            state.keyframeRequests += 1
            return state.source
        }
        source?.requestKeyframe()
    }

    /// A generic NACK about this slot: what is still in the source's history goes again, within the budget.
    func noteNack(_ nack: GenericNACK) {
        let source: VideoForwarder? = lock.withLock {
            state.nacksReceived += 1
            lost.removeAll(keepingCapacity: true)
            for entry in nack.entries {
                var mask = entry.lostBitmask
                var number = entry.packetID
                var more = true
                while more, lost.count < 64, state.retransmissionBudget > 0 {
                    if let original = rewriter.original(ofSequence: number) {
                        lost.append((original, number))
                        state.retransmissionBudget -= 1
                    }
                    // The bitmask's bits name the 16 numbers after the packet id.
                    guard mask != 0 else {
                        more = false
                        continue
                    }
                    let skip = UInt16(mask.trailingZeroBitCount) + 1
                    mask >>= skip
                    number &+= skip
                }
            }
            return lost.isEmpty ? nil : state.source
        }
        guard let source else { return }
        let numbers = lock.withLock { self.lost }
        source.retransmit(numbers, to: self)
    }

    // MARK: the room's queue, once a second

    /// A sender report for the receiver's round trip (mapping the last packet's timestamp to now), the
    /// retransmission budget renewed, and the bitrate sent over the last `elapsedMs`.
    func secondPassed(ntp: UInt64, nowMs: Int64, elapsedMs: Int64) {
        lock.lock()
        defer { lock.unlock() }
        state.retransmissionBudget = Self.retransmissionsPerSecond
        state.bitrateBps = Int((Int64(state.bytes - state.bytesAtLastRate) * 8_000) / max(1, elapsedMs))
        state.bytesAtLastRate = state.bytes
        guard let owner, let transport = state.transport, let last = state.lastTimestamp, keyed() else { return }
        let stamp = last &+ UInt32(clamping: max(0, nowMs - state.lastSentMs) * 90)
        reportBuffer.removeAll(keepingCapacity: true)
        SenderReport(
            ssrc: ssrc, ntpTimestamp: ntp, rtpTimestamp: stamp, packetCount: UInt32(truncatingIfNeeded: state.packets),
            octetCount: UInt32(truncatingIfNeeded: state.octets)
        ).append(to: &reportBuffer)
        reportBuffer.append(contentsOf: sourceDescription)
        if let srtp = state.srtp {
            do { try srtp.protectRTCP(reportBuffer, into: &protected) } catch { return }
            transport(owner, protected)
        } else {
            transport(owner, reportBuffer)
        }
    }

    var report: Report {
        lock.withLock {
            Report(
                mid: mid, shown: state.shown, paused: state.paused, packets: state.packets, bytes: state.bytes,
                retransmitted: state.retransmitted, nacksReceived: state.nacksReceived,
                keyframeRequests: state.keyframeRequests, switches: rewriter.segments,
                bitrateBps: state.bitrateBps)
        }
    }
}
