import Foundation
import ArgumentParser
import CohostClient
import Rooms

/// Where the API is and who calls it: the options every API subcommand shares.
struct ConnectionOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The server (default \(ServerURL.standard), or COHOST_URL).", valueName: "url"))
    var url: String?

    @Option(help: ArgumentHelp("A token to send (or COHOST_TOKEN), instead of --key.", valueName: "jwt"))
    var token: String?

    @Option(
        help: ArgumentHelp(
            "API key to mint an admin token with, its secret from COHOST_SECRET or --secret-file.", valueName: "key"))
    var key: String?

    @Option(name: .customLong("secret-file"), help: ArgumentHelp("A file holding the key's secret.", valueName: "file"))
    var secretFile: String?

    var environment: [String: String] { ProcessInfo.processInfo.environment }

    private var serverText: String { url ?? environment["COHOST_URL"] ?? ServerURL.standard }

    func validate() throws {
        guard ServerURL(serverText) != nil else {
            throw ValidationError("the server URL must be http:// or https:// with a host, got '\(serverText)'")
        }
        guard token == nil || key == nil else { throw ValidationError("give --token or --key, not both") }
        if let key {
            guard !key.isEmpty else { throw ValidationError("--key must not be empty") }
            try SecretSource(flag: nil, file: secretFile).checkGivenOnce(
                places: "--secret-file or the COHOST_SECRET environment variable")
        } else if secretFile != nil {
            throw ValidationError("--secret-file needs --key")
        } else if token == nil, environment["COHOST_TOKEN"] == nil {
            throw ValidationError(
                "no credentials: give --token (or COHOST_TOKEN), or --key with COHOST_SECRET or --secret-file")
        }
    }

    var server: ServerURL {
        // validate() refused any other.
        ServerURL(serverText)!
    }

    /// A flag beats the environment: `--key` is used even when COHOST_TOKEN is set.
    func credential() throws -> Credential {
        if let token { return .given(token) }
        if let key {
            let secret = try SecretSource(flag: nil, file: secretFile).read()
            guard !secret.isEmpty else { throw ValidationError("the secret is empty") }
            return .minted(key: key, secret: secret)
        }
        return .given(environment["COHOST_TOKEN"] ?? "")
    }

    func client() throws -> APIClient { APIClient(server: server, token: try credential().token().token) }
}

/// The token API calls carry: given as it is, or minted here from a key and its secret.
enum Credential {
    case given(String)
    case minted(key: String, secret: String)

    /// As long as `cohost token`'s default: every server accepts it (max_token_ttl is at least an hour unless
    /// lowered), and `cohost events` mints a fresh one when the server closes the socket at its expiry.
    static let lifetime: Int64 = 3600

    /// The token, and when it expires if it was minted here. A minted token is an admin's for every room (`*`), so
    /// one token serves any command; its user is the login name, when it is a valid user id, for the events'
    /// `by` fields.
    func token(now: Date = Date()) -> (token: String, expires: Date?) {
        switch self {
        case .given(let token):
            return (token, nil)
        case let .minted(key, secret):
            let login = ProcessInfo.processInfo.environment["USER"] ?? ""
            let issued = Int64(now.timeIntervalSince1970)
            let claims = TokenClaims(
                iss: key, sub: Identifier.isValid(login) ? login : "cohost-cli", room: "*", admin: true,
                exp: issued + Self.lifetime, nbf: nil, iat: issued)
            return (
                RoomToken.mint(claims, secret: secret),
                Date(timeIntervalSince1970: TimeInterval(issued + Self.lifetime))
            )
        }
    }
}

/// `--json`: the API's own JSON for scripts, instead of the tables a person reads.
struct FormatOptions: ParsableArguments {
    @Flag(help: "Print the API's JSON instead of a table.") var json = false

    /// Prints `answer` as it came, or what `human` makes of it.
    func print(_ answer: Data, human: () throws -> String) throws {
        Swift.print(json ? String(decoding: answer, as: UTF8.self) : try human())
    }

    /// For calls answered with no body (204): a line for a person, nothing for a script.
    func confirm(_ line: String) {
        if !json { Swift.print(line) }
    }
}

/// `--body FILE`, or `-` for standard input.
enum BodyFile {
    static func read(_ path: String) throws -> Data {
        if path == "-" { return FileHandle.standardInput.readDataToEndOfFile() }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ValidationError("cannot read --body file \(path)")
        }
        return data
    }
}

extension CanvasSize: ExpressibleByArgument {
    public init?(argument: String) { self.init(argument) }
}

extension RegionSpec: ExpressibleByArgument {
    public init?(argument: String) { self.init(argument) }
}
