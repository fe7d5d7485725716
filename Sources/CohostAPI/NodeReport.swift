/// One node as `GET /v1/nodes` shows it.
public struct NodeReport: Sendable, Codable, Equatable {
    public var id: String
    public var apiUrl: String
    public var mediaAddress: String
    public var rooms: Int
    public var participants: Int
    /// Cores the process used over its last heartbeat interval.
    public var cpu: Double
    public var heartbeatAgeMs: Int
    public var alive: Bool
    /// The rooms the store says it owns, sorted.
    public var ownedRooms: [String]
    public init(
        id: String, apiUrl: String, mediaAddress: String, rooms: Int, participants: Int, cpu: Double,
        heartbeatAgeMs: Int, alive: Bool, ownedRooms: [String]
    ) {
        self.id = id
        self.apiUrl = apiUrl
        self.mediaAddress = mediaAddress
        self.rooms = rooms
        self.participants = participants
        self.cpu = cpu
        self.heartbeatAgeMs = heartbeatAgeMs
        self.alive = alive
        self.ownedRooms = ownedRooms
    }
}

/// The answer of `GET /v1/nodes`: which node answered, and every node.
public struct NodeList: Codable, Sendable {
    public var node: String
    public var nodes: [NodeReport]
    public init(node: String, nodes: [NodeReport]) {
        self.node = node
        self.nodes = nodes
    }
}
