import Foundation
import ArgumentParser
import CohostClient

extension RoomCommand {
    /// `cohost room snapshot`: the canvas as a PNG file.
    struct Snapshot: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Save a room's canvas as PNG (GET /v1/rooms/{room}/snapshot).")
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "The room's name.") var room: String

        @Option(
            name: [.customShort("o"), .customLong("output")],
            help: ArgumentHelp("The PNG file, or - for standard output.", valueName: "file"))
        var file: String

        func run() async throws {
            let png = try await connection.client().send("GET", "/v1/rooms/\(ServerURL.segment(room))/snapshot")
            if file == "-" {
                FileHandle.standardOutput.write(png)
                return
            }
            do { try png.write(to: URL(fileURLWithPath: file)) } catch {
                throw ValidationError("cannot write \(file): \(error.localizedDescription)")
            }
            let size = PNGSize(png).map { "\($0.width)x\($0.height) " } ?? ""
            print("wrote \(file): \(size)PNG, \(png.count) bytes")
        }
    }
}

/// A PNG's width and height, from its IHDR chunk (bytes 16–23): what the snapshot line reports.
struct PNGSize {
    var width: Int
    var height: Int

    init?(_ png: Data) {
        let bytes = [UInt8](png.prefix(24))
        guard bytes.count == 24, bytes[12..<16].elementsEqual("IHDR".utf8) else { return nil }
        func int(_ at: Int) -> Int { bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        width = int(16)
        height = int(20)
    }
}
