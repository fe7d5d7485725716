import Foundation
import Logging
import Metrics
import Rooms
import CohostAPI

/// This server as one node of a cluster sharing a store (`ClusterStore`: PostgreSQL in production; docs/cluster.md). Once a second it writes its
/// heartbeat (load: rooms, participants, CPU), takes over its share of the rooms of nodes silent for longer than
/// `timeoutMs` (restoring them from their definitions, outputs pushing again), and closes here any room the store
/// says another node now owns. The HTTP layer asks it where rooms live (`ClusterView`). One timer queue runs the
/// loop; the last view of the nodes is shared under `lock`.
public final class ClusterNode: ClusterView, @unchecked Sendable {
    public let nodeID: String
    public let apiURL: String
    public let mediaAddress: String
    public let secret: String
    /// Whether a peer's API URL may be sent calls (`cluster_hosts`): a URL written into the store by whoever can write
    /// there gets no caller's token otherwise.
    private let acceptsPeer: @Sendable (String) -> Bool
    /// Monotonic seconds, for the store lookups' rate limits.
    private let clock: @Sendable () -> Double
    /// Peers already logged as refused, so each is said once.
    private var refusedPeers: Set<String> = []
    let timeoutMs: Int
    private let store: any ClusterStore
    private let manager: RoomManager
    private let logger: Logger
    private let lock = NSLock()
    private var lastNodes: [NodeRecord] = []
    /// Every room's owner as the last heartbeat read it: owner lookups are answered from here.
    private var lastOwners: [String: String] = [:]
    /// When each room was last looked up in the store: at most once a second per room, however many calls ask.
    private var lookedUpMs: [String: Int64] = [:]
    /// Store lookups for names the snapshot does not hold, this second: at most `missLookupsPerSecond`.
    private var missSecond: Int64 = 0
    private var missLookups = 0
    /// A room created on another node since the last heartbeat is found in the store; a flood of made-up names
    /// costs the store this many queries a second and no more (the rest are answered "absent").
    static let missLookupsPerSecond = 20
    private var timer: DispatchSourceTimer?
    private var cpu = ProcessCPU()
    /// Rooms taken over from silent nodes since the start.
    public private(set) var takenOver = 0

    public init(
        store: any ClusterStore, manager: RoomManager, apiURL: String, mediaAddress: String, timeoutMs: Int,
        secret: String, acceptsPeer: @escaping @Sendable (String) -> Bool = { _ in true }, logger: Logger,
        clock: @escaping @Sendable () -> Double = { ProcessInfo.processInfo.systemUptime }
    ) {
        nodeID = store.nodeID
        self.clock = clock
        self.secret = secret
        self.acceptsPeer = acceptsPeer
        self.store = store
        self.manager = manager
        self.apiURL = apiURL
        self.mediaAddress = mediaAddress
        self.timeoutMs = timeoutMs
        self.logger = logger
    }

    deinit { timer?.cancel() }

    /// The first heartbeat now (so peers see this node before it answers), then one a second.
    public func start() throws(StoreError) {
        try beat()
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "cohost.cluster"))
        timer.schedule(deadline: .now() + 1, repeating: 1)
        timer.setEventHandler { [weak self] in self?.tick() }
        timer.resume()
        self.timer = timer
    }

    public func stop() {
        timer?.cancel()
        timer = nil
    }

    func tick() {
        do {
            try beat()
            try takeOverSilentNodesRooms()
            try releaseRoomsOwnedElsewhere()
        } catch {
            logger.error("cluster heartbeat failed", metadata: ["error": "\(error)"])
        }
    }

    func beat() throws(StoreError) {
        let rooms = manager.allRooms
        try store.heartbeat(
            apiURL: apiURL, mediaAddress: mediaAddress, rooms: rooms.count,
            participants: rooms.reduce(0) { $0 + $1.participantCount }, cpu: cpu.coresSinceLastCall())
        let nodes = try store.nodes()
        let owners = try store.owners()
        lock.withLock {
            lastNodes = nodes
            lastOwners = Dictionary(owners.map { ($0.room, $0.owner) }, uniquingKeysWith: { a, _ in a })
        }
    }

    /// The rooms of silent nodes, shared among the live ones by name order (room i of all the store's rooms to
    /// live node i mod n, nodes by id), so each is claimed by one node without a vote, and the share does not shift
    /// as other nodes take theirs; the claim itself is atomic, so two nodes with different views cannot both take
    /// one.
    private func takeOverSilentNodesRooms() throws(StoreError) {
        let nodes = lock.withLock { lastNodes }
        let live = nodes.filter { $0.ageMs <= timeoutMs }.map(\.id).sorted()
        guard let me = live.firstIndex(of: nodeID) else { return }
        let liveSet = Set(live)
        let owners = lock.withLock { lastOwners }.sorted { $0.key < $1.key }.map { (room: $0.key, owner: $0.value) }
        for (i, entry) in owners.enumerated() where i % live.count == me && !liveSet.contains(entry.owner) {
            guard let definition = try store.takeOver(entry.room, from: entry.owner) else { continue }
            lock.withLock { lastOwners[entry.room] = nodeID }
            do {
                try manager.adopt(definition: definition, kicks: store.kicks(of: entry.room))
                lock.withLock { takenOver += 1 }
                logger.notice("room taken over", metadata: ["room": "\(entry.room)", "from": "\(entry.owner)"])
            } catch {
                logger.error(
                    "room taken over but not restored",
                    metadata: ["room": "\(entry.room)", "from": "\(entry.owner)", "error": "\(error)"])
            }
        }
    }

    /// A node that was silent for too long comes back to find its rooms served elsewhere: it lets them go.
    private func releaseRoomsOwnedElsewhere() throws(StoreError) {
        let owners = lock.withLock { lastOwners }
        for room in manager.allRooms {
            guard let owner = owners[room.name], owner != nodeID else { continue }
            manager.release(room.name)
            logger.notice("room released to another node", metadata: ["room": "\(room.name)", "owner": "\(owner)"])
        }
    }

    // MARK: ClusterView

    public func location(of room: String) -> RoomLocation {
        if manager.room(room) != nil { return .local }
        guard let owner = lock.withLock({ lastOwners[room] }) else {
            let second = Int64(clock())
            let allowed = lock.withLock { () -> Bool in
                if missSecond != second { (missSecond, missLookups) = (second, 0) }
                guard missLookups < Self.missLookupsPerSecond else { return false }
                missLookups += 1
                return true
            }
            guard allowed else { return .absent }
            return lookUp(room)
        }
        // This node's by the snapshot but not here: closed since, or a restore that failed. The store says which
        // (a name the snapshot holds: never a query for a made-up one).
        if owner == nodeID { return relocate(room) }
        return location(owner: owner)
    }

    public func relocate(_ room: String) -> RoomLocation {
        let now = Int64(clock() * 1000)
        let due = lock.withLock { () -> Bool in
            if let last = lookedUpMs[room], now - last < 1000 { return false }
            lookedUpMs = lookedUpMs.filter { now - $0.value < 1000 }
            lookedUpMs[room] = now
            return true
        }
        guard due else {
            let owner = lock.withLock { lastOwners[room] }
            return owner.map { $0 == nodeID ? .local : location(owner: $0) } ?? .absent
        }
        return lookUp(room)
    }

    /// The store's owner of `room`, kept in the snapshot.
    private func lookUp(_ room: String) -> RoomLocation {
        ClusterMetrics.storeLookups.increment()
        guard let stored = try? store.owner(of: room) else {
            lock.withLock { _ = lastOwners.removeValue(forKey: room) }
            return .absent
        }
        lock.withLock { lastOwners[room] = stored }
        // Stored as this node's but not here: a restore failed, and the local answer says so.
        if stored == nodeID { return .local }
        return location(owner: stored)
    }

    public func noteOwner(_ room: String, node: String) {
        lock.withLock { lastOwners[room] = node }
    }

    private func location(owner: String) -> RoomLocation {
        let node = lock.withLock { lastNodes.first { $0.id == owner } }
        guard let node, node.ageMs <= timeoutMs, accepted(node) else { return .unavailable(node: owner) }
        return .peer(ClusterPeer(id: node.id, apiURL: node.apiURL))
    }

    /// The live node with the fewest participants, then rooms; this node on a tie.
    public func placement() -> ClusterPeer? {
        let nodes = lock.withLock { lastNodes }.filter { $0.ageMs <= timeoutMs && ($0.id == nodeID || accepted($0)) }
        let ownLoad = (manager.allRooms.reduce(0) { $0 + $1.participantCount }, manager.allRooms.count)
        guard
            let best = nodes.filter({ $0.id != nodeID }).min(by: {
                ($0.participants, $0.rooms, $0.id) < ($1.participants, $1.rooms, $1.id)
            }), (best.participants, best.rooms) < ownLoad
        else { return nil }
        return ClusterPeer(id: best.id, apiURL: best.apiURL)
    }

    public func peers() -> [ClusterPeer] {
        lock.withLock { lastNodes }.filter { $0.id != nodeID && $0.ageMs <= timeoutMs && accepted($0) }.map {
            ClusterPeer(id: $0.id, apiURL: $0.apiURL)
        }
    }

    /// Whether `node`'s API URL is one calls may be sent to; a refused one is logged once.
    private func accepted(_ node: NodeRecord) -> Bool {
        if acceptsPeer(node.apiURL) { return true }
        let first = lock.withLock { refusedPeers.insert(node.id).inserted }
        if first {
            logger.error(
                "a peer's API URL is outside cluster_hosts: no call is sent there",
                metadata: ["node": "\(node.id)", "api": "\(node.apiURL)"])
        }
        return false
    }

    public func report() throws(StoreError) -> [NodeReport] {
        let nodes = try store.nodes()
        let owners = try store.owners()
        return nodes.map { node in
            NodeReport(
                id: node.id, apiUrl: node.apiURL, mediaAddress: node.mediaAddress, rooms: node.rooms,
                participants: node.participants, cpu: (node.cpu * 1000).rounded() / 1000, heartbeatAgeMs: node.ageMs,
                alive: node.ageMs <= timeoutMs, ownedRooms: owners.filter { $0.owner == node.id }.map(\.room))
        }
    }
}

/// The process's CPU time (utime + stime from /proc/self/stat) between calls, in cores.
struct ProcessCPU {
    private var last: (cpu: Double, wall: Double)?

    mutating func coresSinceLastCall() -> Double {
        let now = (cpu: Self.cpuSeconds(), wall: Date().timeIntervalSince1970)
        defer { last = now }
        guard let last, now.wall > last.wall else { return 0 }
        return max(0, (now.cpu - last.cpu) / (now.wall - last.wall))
    }

    static func cpuSeconds() -> Double {
        guard let text = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return 0 }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}

/// The cluster's counters on `/metrics`.
enum ClusterMetrics {
    /// Owner lookups that went to the store (a snapshot's owner that no longer held its room); a request for a
    /// name no node held at the last heartbeat never adds one.
    static var storeLookups: Counter { Counter(label: "cohost_cluster_store_lookups") }
}
