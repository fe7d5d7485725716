import Forwarding
import Foundation
import Layout
import Synchronization

/// Fills every participant's receive slots in one room (docs/forwarding.md): what each slot shows (the
/// `SlotAllocator` over the layout's order, the recent speakers and the receivers' own choices) whenever something
/// changed and twice a second, and once a second which slots each receiver can take (`SlotBudget` over its REMB and
/// loss) and the slots' sender reports. Announces each receiver's slots with a `slots` event when they change.
/// Confined to the room's queue; `invalidate` may be called from anywhere.
final class SlotDirector {
    typealias Transport = @Sendable (Participant, [UInt8]) -> Void
    static let allocationIntervalMs: Int64 = 500
    /// How often a slot still waiting for its source's keyframe asks again.
    static let keyframeRetryMs: Int64 = 100

    private let events: EventHub
    private let transport: Transport
    private let changed = Atomic<Bool>(true)
    private var lastSpoke: [String: Int64] = [:]
    private var lastAllocationMs: Int64?
    private var lastSecondMs: Int64?
    private var lastRetryMs: Int64 = 0
    /// What the last `slots` event of each receiver said.
    /// By session: a user who joins again is announced afresh.
    private var announced: [Int: [StreamKey?]] = [:]

    init(events: EventHub, transport: @escaping Transport) {
        self.events = events
        self.transport = transport
    }

    /// Something that decides the slots changed (a join or leave, a subscription, a camera): allocate at the next
    /// tick.
    func invalidate() { changed.store(true, ordering: .releasing) }

    /// Every audio tick, with the participants present in join order.
    func tick(present: [Participant], roster: Roster, activeSpeaker: String?, nowMs: Int64) {
        if let speaker = activeSpeaker { lastSpoke[speaker] = nowMs }
        guard present.contains(where: { !$0.slots.isEmpty }) || roster.hasMonitors else {
            if !announced.isEmpty { announced.removeAll() }
            return
        }
        let due = lastAllocationMs.map { nowMs - $0 >= Self.allocationIntervalMs } ?? true
        if nowMs - lastRetryMs >= Self.keyframeRetryMs {
            lastRetryMs = nowMs
            let retry: (Participant) -> Void = { receiver in
                for slot in receiver.slots where slot.awaitsKeyframe { slot.source?.requestKeyframe() }
            }
            for receiver in present { retry(receiver) }
            roster.forEachMonitor(retry)
        }
        let allocation = changed.exchange(false, ordering: .acquiring) || due
        let second = lastSecondMs.map { nowMs - $0 >= 1000 } ?? true
        guard allocation || second else { return }
        // The monitors (hidden receivers) are receivers too, never candidates.
        let receivers = present + roster.monitorList
        if allocation {
            allocate(present: present, receivers: receivers, layout: roster.currentLayout)
            lastAllocationMs = nowMs
        }
        if second {
            let elapsed = lastSecondMs.map { nowMs - $0 } ?? 1000
            lastSecondMs = nowMs
            everySecond(present: present, receivers: receivers, elapsedMs: elapsed, nowMs: nowMs)
        }
    }

    /// The streams that can be forwarded, in the layout's order (its regions' users first, then join order).
    private func candidates(_ present: [Participant], layout: Layout) -> [(SlotAllocator.Candidate, VideoForwarder)] {
        var ordered: [Participant] = []
        for region in layout.regions {
            if let p = present.first(where: { $0.userId == region.userId }), !ordered.contains(where: { $0 === p }) {
                ordered.append(p)
            }
        }
        for p in present where !ordered.contains(where: { $0 === p }) { ordered.append(p) }
        // Each participant's camera, then its screen share.
        return ordered.flatMap { p in
            [p.forwarder, p.screenForwarder].compactMap { forwarder in
                forwarder.map {
                    (
                        SlotAllocator.Candidate(
                            key: $0.key, codec: $0.codec, lastSpokeMs: lastSpoke[p.userId],
                            available: $0.key.source == .screen || p.cameraOn),
                        $0
                    )
                }
            }
        }
    }

    private func allocate(present: [Participant], receivers: [Participant], layout: Layout) {
        let streams = candidates(present, layout: layout)
        // A camera turned off keeps its slot but sends nothing to it.
        let forwarders = Dictionary(
            streams.filter(\.0.available).map { ($0.0.key, $0.1) }, uniquingKeysWith: { first, _ in first })
        for receiver in receivers where !receiver.slots.isEmpty {
            let allocation = SlotAllocator.allocate(
                receiver: receiver.userId,
                slots: receiver.slots.map { SlotAllocator.Slot(mid: $0.mid, accepts: $0.offer.accepts) },
                candidates: streams.map(\.0), chosen: receiver.subscriptions, previous: receiver.slots.map(\.shown))
            receiver.unforwardableStreams = allocation.unforwardable
            for (slot, key) in zip(receiver.slots, allocation.shown) {
                let source = key.flatMap { forwarders[$0] }
                guard key != slot.shown || source !== slot.source else { continue }
                slot.show(key, from: source, transport: transport)?.detach(slot)
                source?.attach(slot)
            }
            if announced[receiver.sessionID] != allocation.shown {
                announced[receiver.sessionID] = allocation.shown
                events.publish(
                    .slots(
                        userId: receiver.userId,
                        slots: zip(receiver.slots, allocation.shown).map { SlotAssignment(mid: $0.mid, shown: $1) }))
            }
        }
        for session in announced.keys where !receivers.contains(where: { $0.sessionID == session }) {
            announced[session] = nil
        }
    }

    /// Loss above this in a receiver's recent reports cuts what it is sent.
    static let lossLimitPercent = 10

    private func everySecond(present: [Participant], receivers: [Participant], elapsedMs: Int64, nowMs: Int64) {
        for p in present {
            _ = p.forwarder?.measure(elapsedMs: elapsedMs)
            _ = p.screenForwarder?.measure(elapsedMs: elapsedMs)
        }
        let ntp = NTPTime.now()
        for receiver in receivers where !receiver.slots.isEmpty {
            var estimate = receiver.slots.compactMap { $0.feedback.snapshot.estimatedBitrate }.min()
            let demand = receiver.slots.map { $0.source?.bitrateBps ?? 0 }
            let sending = receiver.slots.map { !$0.isPaused }
            let loss = receiver.slots.map { $0.feedback.recentLossPercent(nowMs: nowMs) }.max() ?? 0
            if loss > Self.lossLimitPercent {
                let sent = zip(demand, sending).reduce(0) { $0 + ($1.1 ? $1.0 : 0) }
                estimate = min(estimate ?? .max, sent * (100 - loss) / 100)
            }
            let admitted = SlotBudget.admit(estimateBps: estimate, demandBps: demand, sending: sending)
            for (slot, on) in zip(receiver.slots, admitted) where slot.setPaused(!on) && on {
                slot.source?.requestKeyframe()
            }
            for slot in receiver.slots { slot.secondPassed(ntp: ntp, nowMs: nowMs, elapsedMs: elapsedMs) }
        }
    }
}

/// One slot in a `slots` event and in the subscriptions' JSON: its mid and the stream it shows.
public struct SlotAssignment: Sendable, Equatable {
    public var mid: String
    public var shown: StreamKey?

    public init(mid: String, shown: StreamKey?) {
        self.mid = mid
        self.shown = shown
    }
}
