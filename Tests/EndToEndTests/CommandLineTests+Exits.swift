import Foundation
import Testing
import TestSupport

extension EndToEnd.CommandLineTests {
    @Test func credentialsComeFromFlagsOrTheEnvironment() throws {
        let s = try Self.server()
        let url = ["COHOST_URL": s.url("")]
        let admin = s.token(room: "*", user: "root", admin: true)
        let fromEnvironment = try CohostCommand.run(
            ["room", "list"], environment: url.merging(["COHOST_TOKEN": admin]) { $1 })
        #expect(
            fromEnvironment.status == 0
                && fromEnvironment.rows == [["NAME", "PARTICIPANTS", "OUTPUTS", "CANVAS", "LAYOUT"]])

        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cohost-cli-\(UUID().uuidString).secret")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data((CohostHarness.secret + "\n").utf8).write(to: file)
        let fromFile = try CohostCommand.run(
            ["room", "list", "--key", CohostHarness.key, "--secret-file", file.path], environment: url)
        #expect(fromFile.status == 0, "\(fromFile.stderr)")
        let twice = try CohostCommand.run(
            ["room", "list", "--key", CohostHarness.key, "--secret-file", file.path],
            environment: url.merging(["COHOST_SECRET": CohostHarness.secret]) { $1 })
        #expect(twice.status == 2 && twice.stderr.contains("give the secret once: --secret-file or the COHOST_SECRET"))

        let wrongSecret = try CohostCommand.run(
            ["room", "list", "--key", CohostHarness.key],
            environment: url.merging(["COHOST_SECRET": "another-secret-0123456789abcdef-0123"]) { $1 })
        #expect(
            wrongSecret.status == 1 && wrongSecret.stderr.hasPrefix("error: token_bad_signature: "),
            "\(wrongSecret.stderr)")
        let participant = try CohostCommand.run(
            ["room", "list", "--token", s.token(room: "r", user: "guest")], environment: url)
        #expect(
            participant.status == 1 && participant.stderr == "error: forbidden: listing rooms needs an admin token\n")

        let none = try CohostCommand.run(["room", "list"], environment: url)
        #expect(
            none.status == 2 && none.stderr.contains("no credentials: give --token (or COHOST_TOKEN)"), "\(none.stderr)"
        )
        let both = try CohostCommand.run(["room", "list", "--token", admin, "--key", "k"], environment: url)
        #expect(both.status == 2 && both.stderr.contains("give --token or --key, not both"))
    }

    @Test func anUnreachableServerExitsWithThree() throws {
        let port = try FreePort.tcp()  // nobody listens there
        for arguments in [["room", "list"], ["events", "r"]] {
            let result = try CohostCommand.run(
                arguments + ["--url", "http://127.0.0.1:\(port)", "--token", "t"], environment: [:])
            #expect(result.status == 3, "\(arguments)")
            #expect(result.stderr == "error: cannot connect to http://127.0.0.1:\(port): connection refused\n")
        }
    }

    @Test(arguments: [
        (["room", "create"], "give the room's name, or --body"),
        (["room", "create", "r", "--canvas", "12"], "The value '12' is invalid for '--canvas <WxH>'"),
        (["room", "create", "r", "--preset", "huge"], "The value 'huge' is invalid for '--preset <preset>'"),
        (["room", "layout", "r", "--mode", "grid", "--body", "-"], "give --mode or --body, not both"),
        (
            ["room", "layout", "r", "--mode", "custom", "--region", "guest"],
            "The value 'guest' is invalid for '--region"
        ),
        (["participant", "mute", "r"], "Missing expected argument '<user>'"),
        (
            ["room", "list", "--url", "ftp://h"],
            "the server URL must be http:// or https:// with a host, got 'ftp://h'"
        ),
        (["room", "explode"], "Usage: cohost room <subcommand>"),
    ])
    func usageErrorsExitWithTwo(arguments: [String], message: String) throws {
        let result = try CohostCommand.run(arguments + ["--token", "t"], environment: [:])
        #expect(result.status == 2 && result.stdout.isEmpty)
        #expect(result.stderr.contains(message), "\(result.stderr)")
    }

    @Test func shellCompletionsNameTheSubcommandsAndTheirValues() throws {
        let bash = try CohostCommand.run(["--generate-completion-script", "bash"], environment: [:])
        #expect(bash.status == 0 && bash.stdout.contains("complete -o filenames -F _cohost cohost"))
        for word in ["room", "participant", "output", "events", "invite", "snapshot", "medium2", "pip"] {
            #expect(bash.stdout.contains(word), "\(word)")
        }
        for shell in ["zsh", "fish"] {
            let script = try CohostCommand.run(["--generate-completion-script", shell], environment: [:])
            #expect(script.status == 0 && script.stdout.contains("participant"), "\(shell)")
        }
    }
}
