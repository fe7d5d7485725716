import Foundation

/// What a cluster node reads and writes in the store the nodes share (docs/cluster.md): its heartbeat, the node
/// registry, room owners and the takeover of a silent node's rooms. `PostgresRoomStore` (module Store) is the one
/// the server uses; `ClusterNode` (module Cluster) depends only on this.
public protocol ClusterStore: Sendable {
    /// This node's id, as its heartbeat and its rooms' owner column carry it.
    var nodeID: String { get }
    /// Registers this node or refreshes its row; the store's own clock stamps it.
    func heartbeat(apiURL: String, mediaAddress: String, rooms: Int, participants: Int, cpu: Double) throws(StoreError)
    /// Every node known, by id.
    func nodes() throws(StoreError) -> [NodeRecord]
    /// Every room and its owner, by name.
    func owners() throws(StoreError) -> [(room: String, owner: String)]
    /// The owner of one room, nil when the store has none by that name.
    func owner(of room: String) throws(StoreError) -> String?
    /// Takes `room` from `formerOwner` (atomic: only one node succeeds); its definition when this node got it.
    func takeOver(_ room: String, from formerOwner: String) throws(StoreError) -> Data?
    /// The kicks of one room.
    func kicks(of room: String) throws(StoreError) -> [StoredRooms.Kick]
}

/// One node of the registry as the store has it.
public struct NodeRecord: Sendable, Equatable {
    public var id: String
    public var apiURL: String
    public var mediaAddress: String
    public var rooms: Int
    public var participants: Int
    public var cpu: Double
    /// Milliseconds since its last heartbeat, by the store's clock.
    public var ageMs: Int

    public init(
        id: String, apiURL: String, mediaAddress: String, rooms: Int, participants: Int, cpu: Double, ageMs: Int
    ) {
        self.id = id
        self.apiURL = apiURL
        self.mediaAddress = mediaAddress
        self.rooms = rooms
        self.participants = participants
        self.cpu = cpu
        self.ageMs = ageMs
    }
}
