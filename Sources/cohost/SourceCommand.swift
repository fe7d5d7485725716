import Foundation
import ArgumentParser
import CohostAPI
import CohostClient

/// `cohost source …`: cameras, streams, encoders and files a room pulls in or takes pushed (docs/sources.md).
struct SourceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "source", abstract: "Add, remove and list a room's sources.",
        subcommands: [Add.self, Remove.self, List.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Pull a URL into the room as a participant, or take an encoder's push (POST …/sources).",
            discussion:
                "URL: rtsp://…, rtmp://…, srt://…, http(s)://….m3u8 or file://name (in the media directory). "
                + "--listen rtmp|srt instead prints the URL an encoder pushes to, its key included.")
        @OptionGroup var connection: ConnectionOptions
        @OptionGroup var format: FormatOptions
        @Argument(help: "The room's name.") var room: String
        @Argument(help: "The participant the source becomes.") var user: String
        @Argument(help: "What to pull (not with --listen).") var url: String?
        @Option(help: "Take a push instead: rtmp or srt.") var listen: String?
        @Flag(help: "Play a file again from its start when it ends.") var loop = false
        @Option(help: "The source's gain in the mix, 0…4.") var gain: Double?
        @Option(help: "RTSP only: tcp (default) or udp.") var transport: String?
        @Option(help: "How far behind its input the source plays, in ms.") var latencyMs: Int?

        func validate() throws {
            guard (url == nil) != (listen == nil) else { throw ValidationError("give a URL or --listen, not both") }
        }

        func run() async throws {
            struct Body: Encodable {
                var userId: String
                var url: String?
                var listen: String?
                var loop: Bool?
                var gain: Double?
                var transport: String?
                var latencyMs: Int?
            }
            let body = try JSONEncoder().encode(
                Body(
                    userId: user, url: url, listen: listen, loop: loop ? true : nil, gain: gain,
                    transport: transport, latencyMs: latencyMs))
            let answer = try await connection.client().send(
                "POST", "/v1/rooms/\(ServerURL.segment(room))/sources", json: body)
            try format.print(answer) { SourceText.list([try SourceInfo.decoded(from: answer)]) }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Stop a source: its participant leaves; a pushed source's encoder is disconnected.",
            discussion: "DELETE /v1/rooms/{room}/sources/{userId}.")
        @OptionGroup var connection: ConnectionOptions
        @OptionGroup var format: FormatOptions
        @Argument(help: "The room's name.") var room: String
        @Argument(help: "The source's user id.") var user: String

        func run() async throws {
            _ = try await connection.client().send(
                "DELETE", "/v1/rooms/\(ServerURL.segment(room))/sources/\(ServerURL.segment(user))")
            format.confirm("removed source \(user) from room \(room)")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List a room's sources with their state (GET /v1/rooms/{room}/sources).",
            discussion: "--json prints the answer.")
        @OptionGroup var connection: ConnectionOptions
        @OptionGroup var format: FormatOptions
        @Argument(help: "The room's name.") var room: String

        func run() async throws {
            let answer = try await connection.client().send("GET", "/v1/rooms/\(ServerURL.segment(room))/sources")
            try format.print(answer) { SourceText.list(try SourceList.decoded(from: answer).sources) }
        }
    }
}
