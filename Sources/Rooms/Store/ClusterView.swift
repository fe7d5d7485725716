import CohostAPI
import Foundation

/// What the HTTP layer asks of a cluster: where a room lives, where a new one should go, and the nodes. Implemented
/// by `ClusterNode` (module Cluster) when the store is shared; a single server has none.
public protocol ClusterView: Sendable {
    /// This node's id.
    var nodeID: String { get }
    /// What the nodes sign forwarded calls and relayed sockets with (`cluster_secret`).
    var secret: String { get }
    /// Where `room` is served: here, nowhere yet, on a live peer, or on a node that stopped answering and whose
    /// rooms have not been taken over yet. Answered from what the last heartbeat read: a name no node held then is
    /// absent without asking the store.
    func location(of room: String) -> RoomLocation
    /// The owner the last heartbeat named answered that it does not hold `room`: where the store says it is now.
    func relocate(_ room: String) -> RoomLocation
    /// A peer answered that it created `room` (a forwarded create or join): it is known there before the next
    /// heartbeat.
    func noteOwner(_ room: String, node: String)
    /// The live node a new room should go to: nil for this one.
    func placement() -> ClusterPeer?
    /// The live peers (not this node).
    func peers() -> [ClusterPeer]
    /// Every node known, with its load and rooms, for `GET /v1/nodes`.
    func report() throws(StoreError) -> [NodeReport]
    /// Stops the heartbeat (the process is stopping).
    func stop()
}

public enum RoomLocation: Sendable, Equatable {
    case local
    /// No node holds a room by that name.
    case absent
    case peer(ClusterPeer)
    /// Owned by a node whose heartbeat is late: the room moves once that node is declared gone.
    case unavailable(node: String)
}

public struct ClusterPeer: Sendable, Equatable {
    public var id: String
    /// The peer's API, `http(s)://host:port`.
    public var apiURL: String
    public init(id: String, apiURL: String) {
        self.id = id
        self.apiURL = apiURL
    }
}
