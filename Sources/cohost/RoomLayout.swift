import Foundation
import ArgumentParser
import CohostAPI
import CohostClient
import Layout

extension RoomCommand {
    /// `cohost room layout`: replaces the room's layout, applied whole at the next frame.
    struct Layout: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Replace a room's layout (PUT /v1/rooms/{room}/layout).",
            discussion: """
                grid: equal tiles in join order. pip: the anchor full-canvas, everyone else small, bottom right. \
                custom: exactly the --region rectangles, each USER@X,Y,WIDTHxHEIGHT in canvas pixels, later ones \
                on top. Fits, z-order, alpha and borders go in a --body (Layout in protocol/openapi.yaml).
                """)
        @OptionGroup var connection: ConnectionOptions
        @OptionGroup var format: FormatOptions
        @Argument(help: "The room's name.") var room: String

        @Option(help: "The layout's mode.") var mode: LayoutMode?

        @Option(help: ArgumentHelp("pip: who fills the canvas (default: the room's anchor).", valueName: "user"))
        var anchor: String?

        @Option(
            name: .customLong("region"),
            help: ArgumentHelp("A participant's rectangle (repeatable).", valueName: "user@x,y,WxH"))
        var regions: [RegionSpec] = []

        @Option(help: ArgumentHelp("The layout's JSON from a file, or - for standard input.", valueName: "file"))
        var body: String?

        func validate() throws {
            switch (mode, body) {
            case (nil, nil): throw ValidationError("give --mode or --body")
            case (.some, .some): throw ValidationError("give --mode or --body, not both")
            case (nil, .some) where anchor != nil || !regions.isEmpty:
                throw ValidationError("--anchor and --region go with --mode; put them in the --body instead")
            default: break
            }
        }

        func run() async throws {
            let json: Data
            if let mode {
                json = LayoutBody(mode: mode.rawValue, anchor: anchor, regions: regions).json()
            } else {
                // Sent as it is: the server's refusal names what is wrong in it.
                json = try BodyFile.read(body ?? "-")
            }
            let answer = try await connection.client().send(
                "PUT", "/v1/rooms/\(ServerURL.segment(room))/layout", json: json)
            try format.print(answer) { LayoutText.show(try LayoutAnswer.decoded(from: answer)) }
        }
    }
}

/// The layout the server answers with; inside `RoomCommand`, `Layout` names the subcommand.
private typealias LayoutAnswer = Layout

enum LayoutMode: String, CaseIterable, ExpressibleByArgument {
    case grid, pip, custom
}
