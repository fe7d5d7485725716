import Foundation
import ArgumentParser
import CohostAPI
import CohostClient

/// `cohost invite`: a guest's join link, minted by the server so no key's secret reaches a browser.
struct Invite: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a participant's join link as a full URL (POST /v1/rooms/{room}/invites).",
        discussion: "The link opens the join page with the participant's token in its fragment.")
    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var format: FormatOptions
    @Argument(help: "The room's name.") var room: String
    @Argument(help: "The guest's user id.") var user: String
    @Option(help: "Seconds the link's token is valid (default 3600, at most the server's max_token_ttl).")
    var ttl: Int?
    @Option(help: "Joins the link opens (1...1000; default: any number until it expires).")
    var uses: Int?

    func run() async throws {
        struct Request: Encodable {
            var userId: String
            var ttlSeconds: Int?
            var uses: Int?
        }
        let client = try connection.client()
        let answer = try await client.send(
            "POST", "/v1/rooms/\(ServerURL.segment(room))/invites",
            json: try JSONEncoder().encode(Request(userId: user, ttlSeconds: ttl, uses: uses)))
        try format.print(answer) { client.server.absolute(link: try InviteInfo.decoded(from: answer).link ?? "") }
    }
}
