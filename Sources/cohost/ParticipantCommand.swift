import Foundation
import ArgumentParser
import CohostAPI
import CohostClient

/// `cohost participant …`: who is in a room, and what an admin does to them.
struct ParticipantCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "participant", abstract: "List, kick and mute a room's participants.",
        subcommands: [List.self, Kick.self, Mute.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List a room's participants in join order (from GET /v1/rooms/{room}).",
            discussion: "--json prints the room's participants array.")
        @OptionGroup var connection: ConnectionOptions
        @OptionGroup var format: FormatOptions
        @Argument(help: "The room's name.") var room: String

        func run() async throws {
            let answer = try await connection.client().send("GET", "/v1/rooms/\(ServerURL.segment(room))")
            try format.print(try JSONField.extract("participants", from: answer)) {
                ParticipantText.list(try RoomInfo.decoded(from: answer).participants)
            }
        }
    }

    struct Kick: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove a participant; their tokens issued until now stop working in the room.",
            discussion: "DELETE /v1/rooms/{room}/participants/{user} with an admin token.")
        @OptionGroup var connection: ConnectionOptions
        @OptionGroup var format: FormatOptions
        @Argument(help: "The room's name.") var room: String
        @Argument(help: "The participant's user id.") var user: String

        func run() async throws {
            _ = try await connection.client().send(
                "DELETE", "/v1/rooms/\(ServerURL.segment(room))/participants/\(ServerURL.segment(user))")
            format.confirm("kicked \(user) from room \(room)")
        }
    }

    struct Mute: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Mute or unmute a participant in the mix, and set their gain.",
            discussion: "PATCH /v1/rooms/{room}/participants/{user}; applied from the next 20 ms block.")
        @OptionGroup var connection: ConnectionOptions
        @OptionGroup var format: FormatOptions
        @Argument(help: "The room's name.") var room: String
        @Argument(help: "The participant's user id.") var user: String
        @Flag(help: "Put the participant back in the mix.") var unmute = false
        @Option(help: "Linear gain in the mix, 0...4 (1 leaves the voice as it is).") var gain: Double?

        func run() async throws {
            struct Mix: Encodable {
                var muted: Bool
                var gain: Double?
            }
            let body = try JSONEncoder().encode(Mix(muted: !unmute, gain: gain))
            _ = try await connection.client().send(
                "PATCH", "/v1/rooms/\(ServerURL.segment(room))/participants/\(ServerURL.segment(user))", json: body)
            let gainText = gain.map { " at gain \($0)" } ?? ""
            format.confirm("\(unmute ? "unmuted" : "muted") \(user) in room \(room)\(gainText)")
        }
    }
}

/// One field of a JSON answer as JSON: the participants or outputs of a room for `--json`.
enum JSONField {
    static func extract(_ key: String, from answer: Data) throws -> Data {
        guard let object = (try? JSONSerialization.jsonObject(with: answer)) as? [String: Any], let value = object[key]
        else {
            throw ClientError.refused(status: 200, code: "unexpected_answer", message: "the answer has no \(key)")
        }
        return try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes])
    }
}
