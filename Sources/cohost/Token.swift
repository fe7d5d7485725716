import Foundation
import ArgumentParser
import Rooms

/// `cohost token`: mints a room token (protocol/token.md).
struct Token: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print a signed room token.")

    @Option(help: "API key (the token's iss).") var key: String
    @Option(help: "The key's secret (visible in ps: prefer COHOST_SECRET or --secret-file).") var secret: String?
    @Option(name: .customLong("secret-file"), help: ArgumentHelp("A file holding the key's secret.", valueName: "file"))
    var secretFile: String?
    @Option(help: "Room name, or * for an admin token valid in every room.") var room: String
    @Option(help: "User id (the token's sub).") var user: String
    @Flag(help: "Grant admin rights (kick, layout, outputs, close).") var admin = false
    @Flag(help: "A viewer token: it only plays the room's programme (HLS), never joins.") var viewer = false
    @Option(help: "Seconds until the token expires.") var ttl = 3600
    @Option(help: "The display name labels, cards and lists show (the token's name).") var name: String?

    func validate() throws {
        guard !key.isEmpty else { throw ValidationError("--key must not be empty") }
        guard !(admin && viewer) else { throw ValidationError("--admin and --viewer exclude each other") }
        try SecretSource(flag: secret, file: secretFile).checkGivenOnce(
            places: "--secret, --secret-file or the COHOST_SECRET environment variable")
        guard Identifier.isValid(room) || (room == "*" && admin) else {
            throw ValidationError("--room must match [A-Za-z0-9_.-]{1,64} (or be * with --admin)")
        }
        guard Identifier.isValid(user) else { throw ValidationError("--user must match [A-Za-z0-9_.-]{1,64}") }
        guard (1...31_536_000).contains(ttl) else { throw ValidationError("--ttl must be within 1...31536000 s") }
        if let name, !DisplayName.isValid(name) { throw ValidationError("--name: \(DisplayName.rule)") }
    }

    func run() throws {
        let secret = try SecretSource(flag: secret, file: secretFile).read()
        guard !secret.isEmpty else { throw ValidationError("the secret is empty") }
        let now = Int64(Date().timeIntervalSince1970)
        let claims = TokenClaims(
            iss: key, sub: user, room: room, admin: admin, viewer: viewer, exp: now + Int64(ttl), nbf: nil, iat: now,
            name: name)
        print(RoomToken.mint(claims, secret: secret))
    }
}
