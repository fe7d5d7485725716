import Forwarding
import Foundation
import Layout
import Synchronization

/// Fills every participant's receive slots in one room (docs/forwarding.md): what each slot shows (the
/// `SlotAllocator` over the layout's order, the recent speakers and the receivers' own choices) whenever something
/// changed (a new active speaker at most twice a second), and once a second which slots each receiver can take
/// (`SlotBudget` over its REMB and loss) and the slots' sender reports. Announces each receiver's slots with a `slots` event when they change.
/// Confined to the room's queue; `invalidate` may be called from anywhere.
final class SlotDirector {
    typealias Transport = @Sendable (Participant, [UInt8]) -> Void
    /// A new active speaker reallocates at most this often (last-N); other changes at the next tick.
    static let allocationIntervalMs: Int64 = 500
    /// How often a slot still waiting for its source's keyframe asks again.
    static let keyframeRetryMs: Int64 = 100

    private let events: EventHub
    private let transport: Transport
    private let changed = Atomic<Bool>(true)
    /// A change taken before this tick's participants were gathered (`takeChanges`): allocate with them.
    private var pending = false
    private var lastSpoke: [String: Int64] = [:]
    private var lastAllocationMs: Int64?
    private var lastSecondMs: Int64?
    private var lastRetryMs: Int64 = 0
    /// The active speaker when the slots were last allocated: last-N follows a new one.
    private var allocatedSpeaker: String?
    /// Reused every second: the receivers, and one receiver's demands, states and verdicts (no allocation a second).
    private var receivers: [Participant] = []
    private var demand: [Int] = []
    private var sending: [Bool] = []
    private var admitted: [Bool] = []
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

    /// Takes the changes announced so far; called at the start of the tick, before the room gathers its participants,
    /// so a join announced here is among those the allocation sees (taken after the gathering, it would be lost).
    func takeChanges() {
        if changed.exchange(false, ordering: .acquiring) { pending = true }
    }

    /// Every audio tick, with the participants present in join order.
    func tick(present: [Participant], roster: Roster, activeSpeaker: String?, nowMs: Int64) {
        if let speaker = activeSpeaker { lastSpoke[speaker] = nowMs }
        guard present.contains(where: { !$0.slots.isEmpty }) || roster.hasMonitors else {
            if !announced.isEmpty { announced.removeAll() }
            return
        }
        let due =
            lastAllocationMs.map { nowMs - $0 >= Self.allocationIntervalMs && activeSpeaker != allocatedSpeaker }
            ?? true
        if nowMs - lastRetryMs >= Self.keyframeRetryMs {
            lastRetryMs = nowMs
            let retry: (Participant) -> Void = { receiver in
                for slot in receiver.slots where slot.awaitsKeyframe { slot.source?.requestKeyframe() }
            }
            for receiver in present { retry(receiver) }
            roster.forEachMonitor(retry)
        }
        let allocation = pending || due
        pending = false
        let second = lastSecondMs.map { nowMs - $0 >= 1000 } ?? true
        guard allocation || second else { return }
        // The monitors (hidden receivers) are receivers too, never candidates.
        receivers.removeAll(keepingCapacity: true)
        receivers.append(contentsOf: present)
        roster.forEachMonitor { receivers.append($0) }
        if allocation {
            allocate(present: present, receivers: receivers, layout: roster.currentLayout)
            lastAllocationMs = nowMs
            allocatedSpeaker = activeSpeaker
        }
        if second {
            let elapsed = lastSecondMs.map { nowMs - $0 } ?? 1000
            lastSecondMs = nowMs
            everySecond(present: present, elapsedMs: elapsed, nowMs: nowMs)
        }
        receivers.removeAll(keepingCapacity: true)
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

    private func everySecond(present: [Participant], elapsedMs: Int64, nowMs: Int64) {
        for p in present {
            _ = p.forwarder?.measure(elapsedMs: elapsedMs)
            _ = p.screenForwarder?.measure(elapsedMs: elapsedMs)
        }
        let ntp = NTPTime.now()
        for receiver in receivers where !receiver.slots.isEmpty {
            var estimate: Int?
            var loss = 0
            var sent = 0
            demand.removeAll(keepingCapacity: true)
            sending.removeAll(keepingCapacity: true)
            for slot in receiver.slots {
                if let remb = slot.feedback.snapshot.estimatedBitrate { estimate = min(estimate ?? remb, remb) }
                loss = max(loss, slot.feedback.recentLossPercent(nowMs: nowMs))
                demand.append(slot.source?.bitrateBps ?? 0)
                sending.append(!slot.isPaused)
                if !slot.isPaused { sent += demand[demand.count - 1] }
            }
            if loss > Self.lossLimitPercent { estimate = min(estimate ?? .max, sent * (100 - loss) / 100) }
            SlotBudget.admit(estimateBps: estimate, demandBps: demand, sending: sending, into: &admitted)
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
