import Foundation
import Rooms

/// Room tokens for the suites: every claim settable, the rest valid for ten minutes from now.
public enum TestToken {
    public static func mint(
        key: String, secret: String, room: String, user: String, admin: Bool = false, viewer: Bool = false,
        exp: Int64? = nil,
        nbf: Int64? = nil, iat: Int64? = nil
    ) -> String {
        let now = Int64(Date().timeIntervalSince1970)
        return RoomToken.mint(
            TokenClaims(
                iss: key, sub: user, room: room, admin: admin, viewer: viewer, exp: exp ?? now + 600, nbf: nbf,
                iat: iat ?? now),
            secret: secret)
    }
}
