/// An invite (`POST /v1/rooms/{room}/invites`): in the 201, a participant token and the join link that carries it;
/// in `GET …/invites`, the invite without them.
public struct InviteInfo: Codable, Sendable {
    /// What `DELETE …/invites/{id}` revokes; the token's `inv` claim.
    public var id: String
    public var userId: String
    public var token: String?
    /// Relative to the server: the page is served by it.
    public var link: String?
    /// ISO 8601.
    public var expiresAt: String
    /// Joins left; nil: any number until it expires.
    public var usesLeft: Int?

    public init(
        id: String, userId: String, token: String?, link: String?, expiresAt: String, usesLeft: Int? = nil
    ) {
        self.id = id
        self.userId = userId
        self.token = token
        self.link = link
        self.expiresAt = expiresAt
        self.usesLeft = usesLeft
    }
}

/// `GET /v1/rooms/{room}/invites`.
public struct InviteList: Codable, Sendable {
    public var invites: [InviteInfo]
    public init(invites: [InviteInfo]) { self.invites = invites }
}
