import Foundation
import ArgumentParser
import CohostAPI
import CohostClient

/// `cohost room …`: rooms over the HTTP API.
struct RoomCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "room", abstract: "Create, list, show, lay out, snapshot and close rooms.",
        subcommands: [Create.self, List.self, Show.self, Close.self, Layout.self, Snapshot.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the rooms (GET /v1/rooms).")
        @OptionGroup var connection: ConnectionOptions
        @OptionGroup var format: FormatOptions

        func run() async throws {
            let answer = try await connection.client().send("GET", "/v1/rooms")
            try format.print(answer) { RoomText.list(try RoomList.decoded(from: answer).rooms) }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show a room: settings, participants, outputs (GET /v1/rooms/{room}).")
        @OptionGroup var connection: ConnectionOptions
        @OptionGroup var format: FormatOptions
        @Argument(help: "The room's name.") var room: String

        func run() async throws {
            let answer = try await connection.client().send("GET", "/v1/rooms/\(ServerURL.segment(room))")
            try format.print(answer) { RoomText.show(try RoomInfo.decoded(from: answer)) }
        }
    }

    struct Close: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Close a room: everyone leaves, outputs stop cleanly (DELETE /v1/rooms/{room}).")
        @OptionGroup var connection: ConnectionOptions
        @OptionGroup var format: FormatOptions
        @Argument(help: "The room's name.") var room: String

        func run() async throws {
            _ = try await connection.client().send("DELETE", "/v1/rooms/\(ServerURL.segment(room))")
            format.confirm("closed room \(room)")
        }
    }
}
