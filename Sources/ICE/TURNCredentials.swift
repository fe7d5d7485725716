import Foundation
import HMAC

/// Short-lived TURN credentials in the scheme coturn's `use-auth-secret` checks (the "TURN REST API" draft,
/// draft-uberti-behave-turn-rest): the username is `<expiry as Unix seconds>:<user id>` and the password the
/// Base64 of HMAC-SHA1 over that username with the secret shared with the TURN server. Nothing is stored: the TURN
/// server recomputes the password and refuses a username whose time has passed.
public struct TURNCredentials: Sendable, Equatable {
    public let username: String
    public let password: String
    public let expiresAt: Int64

    public init(secret: String, userId: String, expiresAt: Int64) {
        username = "\(expiresAt):\(userId)"
        password = Data(HMAC.code(.sha1, key: Array(secret.utf8), data: Array(username.utf8))).base64EncodedString()
        self.expiresAt = expiresAt
    }
}
