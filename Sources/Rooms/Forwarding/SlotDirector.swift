import Forwarding
import Foundation
import Layout
import Synchronization

/// Fills every participant's receive slots in one room (docs/forwarding.md): what each slot shows (the
/// `SlotAllocator` over the layout's order, the recent speakers and the receivers' own choices) whenever something
/// changed (a new active speaker at most twice a second); which layer of a simulcast stream each slot takes, and
/// which slots a receiver can take at all (`LayerSelector` over its REMB, loss and the size it wants), after each
/// allocation and once a second; the slots' sender reports; and which layers no one needs, paused at the sender
/// (`layers` events). Announces each receiver's slots with a `slots` event when they change.
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
    private var lastLayerCheckMs: Int64 = 0
    /// The active speaker when the slots were last allocated: last-N follows a new one.
    private var allocatedSpeaker: String?
    /// Reused every second: the receivers, and one receiver's demands, states and verdicts (no allocation a second).
    private var receivers: [Participant] = []
    private var demands: [LayerSelector.SlotDemand] = []
    private var chosen: [Int?] = []
    private var unlimited: [Int?] = []
    /// Each receiver's upswitch probe, by session.
    private var probes: [Int: UpswitchProbe] = [:]
    /// The streams slots can show, by key, as of the last allocation.
    private var streams: [StreamKey: LayeredVideo] = [:]
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
        // Simulcast senders matter without receivers too: the mixer alone may leave layers unneeded.
        if nowMs - lastLayerCheckMs >= Self.keyframeRetryMs {
            lastLayerCheckMs = nowMs
            pauseUnneededLayers(present, nowMs: nowMs)
        }
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
                for slot in receiver.slots {
                    if slot.awaitsKeyframe { slot.source?.requestKeyframe() }
                    slot.nextLayer?.requestKeyframe()
                    for retired in slot.takeRetired() { retired.detach(slot) }
                }
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
            allocate(present: present, receivers: receivers, layout: roster.currentLayout, nowMs: nowMs)
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
    private func candidates(_ present: [Participant], layout: Layout) -> [(SlotAllocator.Candidate, LayeredVideo)] {
        var ordered: [Participant] = []
        for region in layout.regions {
            if let p = present.first(where: { $0.userId == region.userId }), !ordered.contains(where: { $0 === p }) {
                ordered.append(p)
            }
        }
        for p in present where !ordered.contains(where: { $0 === p }) { ordered.append(p) }
        // Each participant's camera, then its screen share (each with its layers).
        return ordered.flatMap { p in
            p.forwardable.map { stream in
                let first = stream.forwarders[0]
                return (
                    SlotAllocator.Candidate(
                        key: first.key, codec: first.codec, lastSpokeMs: lastSpoke[p.userId],
                        available: first.key.source == .screen || p.cameraOn),
                    stream
                )
            }
        }
    }

    private func allocate(present: [Participant], receivers: [Participant], layout: Layout, nowMs: Int64) {
        let candidates = candidates(present, layout: layout)
        // A camera turned off keeps its slot but sends nothing to it.
        streams = Dictionary(
            candidates.filter(\.0.available).map { ($0.0.key, $0.1) }, uniquingKeysWith: { first, _ in first })
        for receiver in receivers where !receiver.slots.isEmpty {
            let allocation = SlotAllocator.allocate(
                receiver: receiver.userId,
                slots: receiver.slots.map { SlotAllocator.Slot(mid: $0.mid, accepts: $0.offer.accepts) },
                candidates: candidates.map(\.0), chosen: receiver.subscriptions,
                previous: receiver.slots.map(\.shown))
            receiver.unforwardableStreams = allocation.unforwardable
            for (slot, key) in zip(receiver.slots, allocation.shown) {
                let stream = key.flatMap { streams[$0] }
                // Another stream starts on its first layer; `chooseLayers` below moves it to the right one at once.
                let current = slot.source
                if key == slot.shown, let stream, let current, stream.forwarders.contains(where: { $0 === current }) {
                    continue
                }
                if key == slot.shown && stream == nil && current == nil { continue }
                let source = stream?.forwarders[0]
                slot.show(key, from: source, transport: transport)?.detach(slot)
                source?.attach(slot)
            }
            chooseLayers(of: receiver, nowMs: nowMs)
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
            for stream in p.forwardable {
                for forwarder in stream.forwarders { _ = forwarder.measure(elapsedMs: elapsedMs) }
            }
        }
        let ntp = NTPTime.now()
        for receiver in receivers where !receiver.slots.isEmpty {
            chooseLayers(of: receiver, nowMs: nowMs, probe: true)
            for slot in receiver.slots { slot.secondPassed(ntp: ntp, nowMs: nowMs, elapsedMs: elapsedMs) }
        }
        for session in probes.keys where !receivers.contains(where: { $0.sessionID == session }) {
            probes[session] = nil
        }
    }

    /// What the receiver can take: the smallest of its slots' REMBs, cut to what arrives when its reports say more
    /// than `lossLimitPercent` is lost (nil before it said anything); what it is sent now, and its loss.
    private func estimate(of receiver: Participant, nowMs: Int64) -> (bps: Int?, sent: Int, loss: Int) {
        var estimate: Int?
        var loss = 0
        var sent = 0
        for slot in receiver.slots {
            if let remb = slot.feedback.snapshot.estimatedBitrate { estimate = min(estimate ?? remb, remb) }
            loss = max(loss, slot.feedback.recentLossPercent(nowMs: nowMs))
            if !slot.isPaused { sent += slot.source?.bitrateBps ?? 0 }
        }
        if loss > Self.lossLimitPercent { estimate = min(estimate ?? .max, sent * (100 - loss) / 100) }
        return (estimate, sent, loss)
    }

    /// Each slot's layer of the stream it shows (`LayerSelector.forSlots`), or the slot paused when not even the
    /// smallest fits; a slot coming back or moving to another layer starts at that layer's keyframe. The budget is
    /// the receiver's estimate, lifted now and then by its `UpswitchProbe` when a slot wants more (`probe`: once a
    /// second; between the seconds the lift in force holds).
    private func chooseLayers(of receiver: Participant, nowMs: Int64, probe: Bool = false) {
        let heard = estimate(of: receiver, nowMs: nowMs)
        let sizes = receiver.slotSizes
        demands.removeAll(keepingCapacity: true)
        for slot in receiver.slots {
            var demand = LayerSelector.SlotDemand(layers: [], current: nil)
            if let key = slot.shown, let stream = streams[key] {
                stream.selectorLayers(nowMs: nowMs, into: &demand.layers)
                let taken = slot.nextLayer ?? slot.source
                demand.current = slot.isPaused ? nil : stream.forwarders.firstIndex { $0 === taken }
                let size = sizes[slot.mid]
                demand.maxWidth = size?.width
                demand.maxHeight = size?.height
            }
            demands.append(demand)
        }
        LayerSelector.forSlots(demands, budgetBps: heard.bps, into: &chosen)
        if let bps = heard.bps {
            var wantsMore = false
            if probe {
                LayerSelector.forSlots(demands, budgetBps: nil, into: &unlimited)
                for (i, demand) in demands.enumerated() {
                    let rate = { (pick: Int?) in pick.map { demand.layers[$0].bitrateBps } ?? -1 }
                    if rate(unlimited[i]) > rate(chosen[i]) { wantsMore = true }
                }
            }
            var state = probes[receiver.sessionID] ?? UpswitchProbe()
            if probe || state.lifting {
                let budget = state.budget(
                    estimate: bps, sentBps: heard.sent, lossPercent: heard.loss, wantsMore: wantsMore, nowMs: nowMs)
                if probe { probes[receiver.sessionID] = state }
                if budget != bps { LayerSelector.forSlots(demands, budgetBps: budget, into: &chosen) }
            }
        }
        for (index, slot) in receiver.slots.enumerated() {
            guard let key = slot.shown, let stream = streams[key] else { continue }
            guard let layer = chosen[index] else {
                _ = slot.setPaused(true)
                continue
            }
            let forwarder = stream.forwarders[layer]
            if slot.switchLayer(to: forwarder) { forwarder.attach(slot) }
            if slot.setPaused(false) { slot.source?.requestKeyframe() }
        }
    }

    /// Pauses at the sender the simulcast layers neither the mixer nor any slot takes (after `pauseAfterMs`
    /// unneeded), and resumes a needed one at once: a `layers` event the sender applies.
    private func pauseUnneededLayers(_ present: [Participant], nowMs: Int64) {
        // Every 100 ms for every participant: no array made here.
        for p in present {
            if let camera = p.video, camera.isSimulcast { pauseUnneeded(camera, of: p, nowMs: nowMs) }
            if let screen = p.screen, screen.isSimulcast { pauseUnneeded(screen, of: p, nowMs: nowMs) }
        }
    }

    private func pauseUnneeded(_ stream: LayeredVideo, of p: Participant, nowMs: Int64) {
        var needed = stream.mixerNeeds
        for (index, forwarder) in stream.forwarders.enumerated() where forwarder.subscriberCount > 0 {
            needed |= 1 << UInt32(index)
        }
        guard let paused = stream.updateSenderPauses(needed: needed, nowMs: nowMs) else { return }
        let all = stream.layers.indices.reduce(UInt32(0)) { $0 | 1 << UInt32($1) }
        events.publish(
            .layers(
                userId: p.userId, source: stream.source.rawValue, active: stream.rids(in: all & ~paused),
                paused: stream.rids(in: paused)))
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
