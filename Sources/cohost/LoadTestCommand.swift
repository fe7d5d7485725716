import Foundation
import ArgumentParser
import CohostClient
import LoadTest

/// `cohost load-test`: synthetic participants against a server, to size a machine.
struct LoadTestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "load-test",
        abstract: "Join synthetic participants (VP8 + Opus, or Opus only) into rooms and report how the server held.",
        discussion: """
            Creates rooms <prefix>-1 … <prefix>-R (an admin token is needed), joins N participants into each over \
            plain RTP (IPv4), each sending a pre-encoded clip in real time: Opus every 20 ms and, unless \
            --audio-only, VP8 at --fps. After --seconds it reads the server's own view of every room and its \
            /metrics, closes the rooms and prints per room: join times, what was sent, the slowest sender's decoded \
            frame rate on the server, losses, frames the server dropped to keep up, what came back (with \
            --receive), the output's state and frame rate (with --output), and whether the room held in real time.
            """)
    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var format: FormatOptions
    @Option(name: .shortAndLong, help: "Rooms.") var rooms = 1
    @Option(name: .shortAndLong, help: "Participants per room.") var participants = 4
    @Option(name: .shortAndLong, help: "Seconds to hold everyone after the last join.") var seconds = 30.0
    @Flag(help: "Audio-only rooms: participants send Opus only.") var audioOnly = false
    @Flag(help: "Receive the return path: the mix-minus, and the room view in video rooms.") var receive = false
    @Option(
        help: ArgumentHelp(
            "Receive slots per participant: the others' cameras, forwarded (without --receive the rooms send no room view).",
            valueName: "K"))
    var slots = 0
    @Option(help: ArgumentHelp("Each participant's picture size.", valueName: "WxH")) var video = CanvasSize(
        width: 640, height: 360)
    @Option(help: "Each participant's frame rate.") var fps = 30
    @Option(help: "Each participant's video bitrate, kb/s.") var kbps = 800
    @Option(help: "Room names are <prefix>-1 … <prefix>-R.") var prefix = "load"
    @Option(help: ArgumentHelp("An RTMP URL each room pushes to; {room} is replaced by its name.", valueName: "url"))
    var output: String?

    func validate() throws {
        guard (1...1000).contains(rooms) else { throw ValidationError("--rooms must be 1…1000") }
        guard (1...64).contains(participants) else { throw ValidationError("--participants must be 1…64") }
        guard seconds > 0, seconds <= 86_400 else { throw ValidationError("--seconds must be above 0, at most a day") }
        guard (1...60).contains(fps) else { throw ValidationError("--fps must be 1…60") }
        guard (50...20_000).contains(kbps) else { throw ValidationError("--kbps must be 50…20000") }
        guard (0...16).contains(slots) else { throw ValidationError("--slots must be 0…16") }
        guard video.width % 2 == 0, video.height % 2 == 0, video.width <= 1920, video.height <= 1920 else {
            throw ValidationError("--video must have even sides of at most 1920")
        }
        guard !prefix.isEmpty, prefix.allSatisfy({ $0.isLetter || $0.isNumber || "_.-".contains($0) }) else {
            throw ValidationError("--prefix must be letters, digits, '_', '.' or '-'")
        }
        if let output, !output.lowercased().hasPrefix("rtmp://") {
            throw ValidationError("--output must be an rtmp:// URL")
        }
    }

    func run() async throws {
        var plan = LoadTestPlan()
        plan.rooms = rooms
        plan.participantsPerRoom = participants
        plan.seconds = seconds
        plan.audioOnly = audioOnly
        plan.receive = receive
        plan.slots = slots
        plan.video = (video.width, video.height, fps, kbps)
        plan.prefix = prefix
        plan.output = output
        let run = LoadTestRun(plan: plan, admin: try connection.client()) { line in
            FileHandle.standardError.write(Data((line + "\n").utf8))
        }
        let report: LoadReport
        do { report = try await run.run() } catch let error as LoadTestError {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            throw ExitCode(1)
        }
        if format.json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
        } else {
            print(report.text)
        }
    }
}
