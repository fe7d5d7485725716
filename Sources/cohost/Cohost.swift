import Foundation
import ArgumentParser
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
        subcommands: [Serve.self, Token.self],
        defaultSubcommand: Serve.self)
}
