import ICE

/// The STUN and TURN servers Cohost hands to its clients, and the TURN credentials it mints for each one
/// (`TURNCredentials`: coturn checks them with the same secret; Cohost relays nothing itself). Given to WHIP and
/// WHEP clients as `Link` headers (RFC 9725 §4.4) and to pages through `GET /v1/rooms/{room}/ice-servers`.
public struct ICEServers: Sendable, Equatable {
    /// `turn:`/`turns:` URIs, one credential for all of them.
    public var turnURLs: [String]
    /// coturn's `static-auth-secret`; required with `turnURLs`.
    public var turnSecret: String?
    /// `stun:` URIs, handed out without credentials.
    public var stunURLs: [String]

    public init(turnURLs: [String] = [], turnSecret: String? = nil, stunURLs: [String] = []) {
        self.turnURLs = turnURLs
        self.turnSecret = turnSecret
        self.stunURLs = stunURLs
    }

    public var isEmpty: Bool { stunURLs.isEmpty && (turnURLs.isEmpty || turnSecret == nil) }

    /// One entry of `RTCConfiguration.iceServers`.
    public struct Entry: Codable, Sendable, Equatable {
        public var urls: [String]
        public var username: String?
        public var credential: String?
    }

    /// The servers for `userId`, the TURN ones with credentials that end at `expiresAt` (Unix seconds).
    public func entries(userId: String, expiresAt: Int64) -> [Entry] {
        var entries: [Entry] = []
        if !turnURLs.isEmpty, let turnSecret {
            let credentials = TURNCredentials(secret: turnSecret, userId: userId, expiresAt: expiresAt)
            entries.append(Entry(urls: turnURLs, username: credentials.username, credential: credentials.password))
        }
        if !stunURLs.isEmpty { entries.append(Entry(urls: stunURLs)) }
        return entries
    }

    /// `Link` header values (RFC 9725 §4.4): one per URI, with the credential on the TURN ones.
    public func linkValues(userId: String, expiresAt: Int64) -> [String] {
        entries(userId: userId, expiresAt: expiresAt).flatMap { entry in
            entry.urls.map { url in
                var value = "<\(url)>; rel=\"ice-server\""
                if let username = entry.username, let credential = entry.credential {
                    value += "; username=\(Self.quoted(username)); credential=\(Self.quoted(credential))"
                    value += "; credential-type=\"password\""
                }
                return value
            }
        }
    }

    /// An RFC 9110 quoted-string.
    private static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}
