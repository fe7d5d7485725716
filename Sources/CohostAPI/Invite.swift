/// The 201 of `POST /v1/rooms/{room}/invites`: a participant token and the join link that carries it.
public struct InviteInfo: Codable, Sendable {
    public var userId: String
    public var token: String
    /// Relative to the server: the page is served by it.
    public var link: String
    /// ISO 8601.
    public var expiresAt: String

    public init(userId: String, token: String, link: String, expiresAt: String) {
        self.userId = userId
        self.token = token
        self.link = link
        self.expiresAt = expiresAt
    }
}
