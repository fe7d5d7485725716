import CohostAPI
import Forwarding
import Media

/// What a participant's receive slots show and its own choices for them (`GET`/`PUT …/subscriptions`).
extension RoomManager {
    /// What a participant's slots show, and its own choices.
    public func subscriptions(room roomName: String, userId: String) throws(RoomError) -> Subscriptions {
        guard let room = room(roomName) else { throw .notFound("no room '\(roomName)'") }
        let (slots, chosen, sizes) = try room.slots(of: userId)
        let mids = Set(chosen.keys).union(sizes.keys).sorted()
        return Subscriptions(
            slots: slots.map { .init(mid: $0.mid, userId: $0.shown?.userId, source: $0.shown?.source.rawValue) },
            chosen: mids.map { mid in
                .init(
                    mid: mid, userId: chosen[mid]?.userId, source: chosen[mid]?.source.rawValue,
                    maxWidth: sizes[mid]?.width, maxHeight: sizes[mid]?.height)
            })
    }

    /// The picture sizes a slot may ask for.
    static let slotSizeRange = 16...7680

    /// Replaces a participant's own choices for its slots (`PUT …/subscriptions`); a slot named twice takes the
    /// last. An entry may name only a size: the slot stays filled automatically, within that size.
    public func subscribe(
        room roomName: String, userId: String, chosen: [Subscriptions.Slot]
    ) throws(RoomError)
        -> Subscriptions
    {
        guard let room = room(roomName) else { throw .notFound("no room '\(roomName)'") }
        var choices: [String: StreamKey] = [:]
        var sizes: [String: SlotSize] = [:]
        for slot in chosen {
            for (name, value) in [("maxWidth", slot.maxWidth), ("maxHeight", slot.maxHeight)] {
                guard let value, !Self.slotSizeRange.contains(value) else { continue }
                throw .badRequest(
                    "invalid_subscription",
                    "slot '\(slot.mid)': \(name) must be within \(Self.slotSizeRange.lowerBound)...\(Self.slotSizeRange.upperBound), not \(value)"
                )
            }
            let sized = slot.maxWidth != nil || slot.maxHeight != nil
            if sized { sizes[slot.mid] = SlotSize(width: slot.maxWidth, height: slot.maxHeight) }
            guard let user = slot.userId, !user.isEmpty else {
                // A size alone: the slot stays automatic (a source without a user names nothing to show).
                if sized && slot.userId == nil { continue }
                throw .badRequest("invalid_subscription", "slot '\(slot.mid)': userId is required")
            }
            guard let source = StreamSource(rawValue: slot.source ?? "camera") else {
                throw .badRequest(
                    "invalid_subscription",
                    "slot '\(slot.mid)': source must be camera or screen, not '\(slot.source ?? "")'")
            }
            // A slot named twice shows what it is named last.
            choices[slot.mid] = StreamKey(userId: user, source: source)
        }
        try room.subscribe(userId, choices, sizes: sizes)
        return try subscriptions(room: roomName, userId: userId)
    }
}
