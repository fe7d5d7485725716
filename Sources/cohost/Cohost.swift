import Foundation
import ArgumentParser
import CohostClient
import Logging
import Metrics
import Prometheus
import Rooms
import Server

/// `cohost`: the conferencing server and its tools.
@main
struct Cohost: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Cohost: mixes RTP participants into one H.264+AAC programme pushed over RTMP.",
        discussion: """
            The API subcommands exit 0 when the call succeeded, 1 when the server refused it (its error code and \
            message on standard error), 2 on a usage error, 3 when the server cannot be reached.
            """,
        subcommands: [
            Serve.self, Token.self, RoomCommand.self, ParticipantCommand.self, OutputCommand.self, SourceCommand.self,
            Events.self,
            Invite.self, LoadTestCommand.self,
        ],
        defaultSubcommand: Serve.self)

    /// argument-parser's `main`, with the exit statuses above: its usage errors would exit 64 (EX_USAGE).
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch let error as ClientError {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            exit(withError: ExitCode(error.exitCode))
        } catch {
            guard exitCode(for: error) == .validationFailure else { exit(withError: error) }
            FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
            exit(withError: ExitCode(2))
        }
    }
}
