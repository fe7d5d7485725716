import Foundation
import ArgumentParser
import CohostAPI
import CohostClient

extension RoomCommand {
    /// `cohost room create`: the common fields as flags, anything else in `--body`.
    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a room (POST /v1/rooms).",
            discussion: """
                The flags set the common fields. --body gives the whole request (RoomCreate in \
                protocol/openapi.yaml) from a file or standard input; a name or flag given besides replaces that \
                field in it, and each --output is added to its outputs.
                """)
        @OptionGroup var connection: ConnectionOptions
        @OptionGroup var format: FormatOptions

        @Argument(help: "The room's name, [A-Za-z0-9_.-]{1,64} (optional with --body).") var name: String?

        @Option(help: ArgumentHelp("Canvas size (default 1280x720).", valueName: "WxH")) var canvas: CanvasSize?

        @Option(help: "Canvas frames per second (default 30).") var fps: Int?

        @Option(help: "Video preset: canvas, fps, bitrate and profile, before --canvas and --fps apply.")
        var preset: VideoPreset?

        @Flag(
            name: .customLong("audio-only"),
            help:
                "Participants send sound only; without --canvas or --fps the programme is audio only, with them it shows everyone's card."
        )
        var audioOnly = false

        @Option(
            name: .customLong("output"),
            help: ArgumentHelp(
                "Push the programme to an rtmp://, rtmps:// or file:// URL (repeatable).", valueName: "url"))
        var outputs: [String] = []

        @Option(help: ArgumentHelp("The request's JSON from a file, or - for standard input.", valueName: "file"))
        var body: String?

        func validate() throws {
            guard name != nil || body != nil else { throw ValidationError("give the room's name, or --body") }
        }

        func run() async throws {
            var fields = RoomCreateBody()
            fields.name = name
            fields.canvas = canvas
            fields.fps = fps
            fields.preset = preset?.rawValue
            fields.audioOnly = audioOnly
            fields.outputs = outputs
            let base = try body.map(BodyFile.read)
            let json: Data
            if let base, fields.isEmpty {
                // Sent as it is: the server's refusal of a bad body names the field.
                json = base
            } else {
                do { json = try fields.json(over: base) } catch {
                    throw ValidationError("--body \(body ?? ""): \(error)")
                }
            }
            let answer = try await connection.client().send("POST", "/v1/rooms", json: json)
            try format.print(answer) { RoomText.show(try RoomInfo.decoded(from: answer)) }
        }
    }
}

/// `video.preset` of protocol/openapi.yaml (docs/configuration.md has the table).
enum VideoPreset: String, CaseIterable, ExpressibleByArgument {
    case low1, low2, low3, medium1, medium2, medium3, high1, high2, high3
}
