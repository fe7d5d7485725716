import Foundation
import ArgumentParser
import CohostClient

/// `cohost events`: a room's events WebSocket on standard output.
struct Events: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a room's events as JSON lines until interrupted or the socket closes.",
        discussion: """
            One event a line (protocol/events.schema.json), from GET /v1/rooms/{room}/events. The socket closes \
            after room_closed, and when its token expires; a token minted from --key is then minted again and the \
            room followed on. A note on standard error says when the socket is open.
            """)
    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "The room's name.") var room: String

    func run() async throws {
        let credential = try connection.credential()
        var (token, expires) = credential.token()
        let room = room
        while true {
            let end = try await EventStream.follow(
                server: connection.server, room: room, token: token,
                onConnected: { FileHandle.standardError.write(Data("following the events of room \(room)\n".utf8)) },
                onEvent: { FileHandle.standardOutput.write(Data(($0 + "\n").utf8)) })
            // Written unbuffered above: a line is out even when the command is interrupted right after it.
            guard end == .closed, let expiry = expires, Date() >= expiry.addingTimeInterval(-10) else { return }
            (token, expires) = credential.token()
        }
    }
}
