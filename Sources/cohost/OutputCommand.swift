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
                "rtmp://host[:port]/app/stream, rtmps://…, srt://host:port?streamid=…, file:///abs/path.flv (inside the "
                + "recordings directory), or hls: the programme served as HLS at /v1/rooms/{room}/hls/index.m3u8.")
        @OptionGroup var connection: ConnectionOptions
        @OptionGroup var format: FormatOptions
        @Argument(help: "The room's name.") var room: String
        @Argument(help: "The output's URL, or hls.") var url: String
        @Option(name: .customLong("segment-seconds"), help: "hls: segment length (1 to 10, default 2).")
        var segmentSeconds: Double?
        @Option(name: .customLong("part-seconds"), help: "hls: Low-Latency part length (0: plain HLS; default 0.333).")
        var partSeconds: Double?
        @Option(name: .customLong("window"), help: "hls: segments in the playlist (3 to 30, default 6).")
        var windowSegments: Int?
        @Flag(name: .customLong("public"), help: "hls: served without a token.") var isPublic = false
        @Flag(help: "hls: also written into the recordings directory, with a VOD playlist at the end.") var vod = false

        func validate() throws {
            let hlsOnly = segmentSeconds != nil || partSeconds != nil || windowSegments != nil || isPublic || vod
            if hlsOnly && url != "hls" {
                throw ValidationError("--segment-seconds, --part-seconds, --window, --public and --vod are for hls")
            }
        }

        func run() async throws {
            var fields: [String: Any] = url == "hls" ? ["kind": "hls"] : ["url": url]
            if let segmentSeconds { fields["segmentSeconds"] = segmentSeconds }
            if let partSeconds { fields["partSeconds"] = partSeconds }
            if let windowSegments { fields["windowSegments"] = windowSegments }
            if isPublic { fields["public"] = true }
            if vod { fields["vod"] = true }
            let body = try JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])
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
