import Foundation
import Layout

/// Who is in a room and how they are placed: the members in join order, the layout, the anchor and the room's
/// pictures. (Who was kicked is the manager's: kicks outlive the room.) Control calls (joins, leaves, layout changes) and the ticks use it from any
/// thread: every member takes `lock`, which is held for nothing slow (no decode, no encode, no I/O).
final class Roster: @unchecked Sendable {
    private let lock = NSLock()
    private let room: String
    private let maxParticipants: Int
    private var members: [String: Participant] = [:]
    private var joinOrder: [String] = []
    /// Hidden receivers (`Participant.isMonitor`, the console's camera previews): never members, so never in the
    /// layout, the mix, the participant list or the events; only their slots are filled.
    private var monitors: [String: Participant] = [:]
    private var closed = false
    private var layout: Layout
    /// The canvas now: the room's, or what a `PATCH` changed it to.
    private var canvas: RoomConfig.Canvas
    private var anchor: String?
    private var images: RoomImages
    /// Bumped whenever the layout, the members or the anchor change: what placements depend on.
    private var placementVersion: UInt64 = 0
    /// Users who left since the last audio tick (their meters go on the room's queue).
    let departed = DepartedList()

    init(config: RoomConfig) {
        room = config.name
        maxParticipants = config.maxParticipants
        layout = config.layout
        anchor = config.anchor
        images = config.images
        canvas = config.canvas
    }

    // MARK: members

    /// Adds a participant, returning the one it replaces (same user id), if any. `whileAdding` runs under the lock,
    /// so a room parking itself cannot miss the join (it checks for members under the same lock).
    func add(_ participant: Participant, whileAdding: () -> Void) throws(RoomError) -> Participant? {
        lock.lock()
        defer { lock.unlock() }
        guard !closed else { throw .notFound("room '\(room)' is closed") }
        if participant.isMonitor {
            let previous = monitors.updateValue(participant, forKey: participant.userId)
            whileAdding()
            return previous
        }
        let previous = members[participant.userId]
        if previous == nil && members.count >= maxParticipants {
            throw .conflict("room_full", "room '\(room)' is full (\(maxParticipants) participants)")
        }
        members[participant.userId] = participant
        placementVersion &+= 1
        if previous == nil { joinOrder.append(participant.userId) }
        whileAdding()
        return previous
    }

    /// Removes `userId` (only the session `session` of them, when given).
    func remove(_ userId: String, ifSession session: Int? = nil) -> Participant? {
        lock.withLock {
            // Sessions are unique; without one, a member of that name goes before a monitor.
            if let m = monitors[userId], session.map({ $0 == m.sessionID }) ?? (members[userId] == nil) {
                monitors[userId] = nil
                return m
            }
            guard let p = members[userId], session == nil || p.sessionID == session else { return nil }
            members[userId] = nil
            placementVersion &+= 1
            joinOrder.removeAll { $0 == userId }
            departed.append(userId)
            return p
        }
    }

    /// Closes the roster to joins and empties it; returns who was present, in join order.
    func close() -> [Participant] {
        lock.withLock {
            closed = true
            let list = joinOrder.compactMap { members[$0] } + monitors.values
            members.removeAll()
            joinOrder.removeAll()
            monitors.removeAll()
            return list
        }
    }

    var isClosed: Bool { lock.withLock { closed } }
    var count: Int { lock.withLock { members.count } }
    var participants: [Participant] { lock.withLock { joinOrder.compactMap { members[$0] } } }
    func participant(_ userId: String) -> Participant? { lock.withLock { members[userId] } }
    /// A member, else a monitor of that user id.
    func memberOrMonitor(_ userId: String) -> Participant? { lock.withLock { members[userId] ?? monitors[userId] } }
    var hasMonitors: Bool { lock.withLock { !monitors.isEmpty } }
    /// WHEP viewers are monitors that receive the programme.
    var hasViewers: Bool { lock.withLock { monitors.values.contains { $0.isViewer } } }
    var viewerCount: Int { lock.withLock { monitors.values.filter(\.isViewer).count } }
    func fillViewers(_ list: inout [Participant]) {
        lock.withLock {
            list.removeAll(keepingCapacity: true)
            for m in monitors.values where m.isViewer { list.append(m) }
        }
    }
    func monitor(_ userId: String) -> Participant? { lock.withLock { monitors[userId] } }
    /// Runs `body` on each monitor under the lock (nothing slow: no allocation on a tick).
    func forEachMonitor(_ body: (Participant) -> Void) { lock.withLock { for m in monitors.values { body(m) } } }
    var monitorList: [Participant] { lock.withLock { Array(monitors.values) } }

    /// Refills `list` with the members in join order, in place (hot path: every audio tick).
    func fill(_ list: inout [Participant]) {
        lock.withLock {
            list.removeAll(keepingCapacity: true)
            for userId in joinOrder { if let p = members[userId] { list.append(p) } }
        }
    }

    /// Participants silent for longer than `ms`, in join order. Allocates only when there are some: the sweep asks
    /// every room once a second. (A participant's packet time is atomic: the sweep never waits for a decode.)
    func participants(idleLongerThan ms: Int64, nowMs: Int64) -> [Participant] {
        lock.withLock {
            var idle: [Participant] = []
            for id in joinOrder {
                if let p = members[id], p.idleMilliseconds(nowMs: nowMs) > ms { idle.append(p) }
            }
            for m in monitors.values where m.idleMilliseconds(nowMs: nowMs) > ms { idle.append(m) }
            return idle
        }
    }

    /// Runs `body` under the lock when nobody is in the room and no departure waits for its last meter report,
    /// and returns what it returned (false otherwise): a join cannot slip in between the check and `body`.
    func ifEmpty(_ body: () -> Bool) -> Bool {
        lock.withLock { members.isEmpty && departed.isEmpty ? body() : false }
    }

    // MARK: layout, anchor and pictures

    var currentLayout: Layout { lock.withLock { layout } }

    func setLayout(_ newLayout: Layout) {
        lock.withLock {
            layout = newLayout
            placementVersion &+= 1
        }
    }

    var appearance: (anchor: String?, images: RoomImages) { lock.withLock { (anchor, images) } }

    var currentCanvas: RoomConfig.Canvas { lock.withLock { canvas } }

    /// A new canvas with the layout and pictures fitted to it, taken whole by the next frame.
    func setCanvas(_ newCanvas: RoomConfig.Canvas, layout newLayout: Layout, images newImages: RoomImages) {
        lock.withLock {
            canvas = newCanvas
            layout = newLayout
            images = newImages
            placementVersion &+= 1
        }
    }

    func setAppearance(anchor newAnchor: String?, images newImages: RoomImages) {
        lock.withLock {
            anchor = newAnchor
            images = newImages
            placementVersion &+= 1
        }
    }

    var currentImages: RoomImages { lock.withLock { images } }

    /// The user a pip layout shows full-canvas now (nil for other layouts or an empty room).
    var effectiveAnchor: String? {
        lock.withLock {
            guard layout.mode == .pip else { return nil }
            return LayoutEngine.effectiveAnchor(for: layout, participants: joinOrder, anchor: anchorCandidate)
        }
    }

    /// What placements are computed from, when it changed since `version` (nil: never placed).
    func placementInputs(
        ifChangedSince version: UInt64?
    )
        -> (layout: Layout, order: [String], anchor: String?, canvas: RoomConfig.Canvas, version: UInt64)?
    {
        lock.withLock {
            // A source with no pictures (music) is in the mix only, never in a layout.
            placementVersion == version
                ? nil
                : (
                    layout, joinOrder.filter { members[$0]?.showsOnCanvas ?? true }, anchorCandidate, canvas,
                    placementVersion
                )
        }
    }

    /// Who a pip layout without its own `anchor` puts full-canvas: the room's `anchor`, else the first
    /// admin present (in join order). Under `lock`.
    private var anchorCandidate: String? {
        if let anchor, members[anchor] != nil { return anchor }
        return joinOrder.first { members[$0]?.isAdmin == true }
    }
}
