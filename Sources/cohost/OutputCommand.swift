import Foundation
import ArgumentParser
import CohostAPI
import CohostClient

/// `cohost output …`: where a room's programme goes, changed while it runs.
struct OutputCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "output", abstract: "Add, remove and list a room's outputs.",
        subcommands: [Add.self, Remove.self, List.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Push the room's programme to a URL (POST /v1/rooms/{room}/outputs).",
            discussion:
                "rtmp://host[:port]/app/stream, rtmps://… or file:///abs/path.flv (inside the recordings directory).")
        @OptionGroup var connection: ConnectionOptions
        @OptionGroup var format: FormatOptions
        @Argument(help: "The room's name.") var room: String
        @Argument(help: "The output's URL.") var url: String

        func run() async throws {
            let body = try JSONEncoder().encode(["url": url])
            let answer = try await connection.client().send(
                "POST", "/v1/rooms/\(ServerURL.segment(room))/outputs", json: body)
            try format.print(answer) { OutputText.list([try OutputInfo.decoded(from: answer)]) }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Stop an output: it flushes what it has queued, then disconnects.",
            discussion: "DELETE /v1/rooms/{room}/outputs/{id}.")
        @OptionGroup var connection: ConnectionOptions
        @OptionGroup var format: FormatOptions
        @Argument(help: "The room's name.") var room: String
        @Argument(help: "The output's id (o1, o2, …: see output list).") var id: String

        func run() async throws {
            _ = try await connection.client().send(
                "DELETE", "/v1/rooms/\(ServerURL.segment(room))/outputs/\(ServerURL.segment(id))")
            format.confirm("removed output \(id) from room \(room)")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List a room's outputs with their state (from GET /v1/rooms/{room}).",
            discussion: "--json prints the room's outputs array.")
        @OptionGroup var connection: ConnectionOptions
        @OptionGroup var format: FormatOptions
        @Argument(help: "The room's name.") var room: String

        func run() async throws {
            let answer = try await connection.client().send("GET", "/v1/rooms/\(ServerURL.segment(room))")
            try format.print(try JSONField.extract("outputs", from: answer)) {
                OutputText.list(try RoomInfo.decoded(from: answer).outputs)
            }
        }
    }
}
