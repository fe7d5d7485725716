import Foundation
import Testing
@testable import ServeConfig

@Suite struct ConfigFileTests {
    /// The repository root, from this file's path (Tests/ServeConfigTests/ConfigFileTests.swift).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test func theShippedExampleConfigLoadsWithTheBuiltInDefaults() throws {
        let path = Self.root.appendingPathComponent("deploy/cohost.example.toml").path
        let s = try ServeSettings.resolve(flags: ServeFlags(), env: [:], file: try ConfigFile.load(path: path))
        let defaults = try ServeSettings.resolve(flags: ServeFlags(), env: [:], file: nil)
        #expect(s.http == defaults.http)
        #expect(s.rtpPort == defaults.rtpPort)
        #expect(s.publicIP == defaults.publicIP)
        #expect(s.keys == nil)
        #expect(s.participantTimeout == defaults.participantTimeout)
        #expect(s.emptyRoomTimeout == defaults.emptyRoomTimeout)
        #expect(s.decodeBudgetMs == defaults.decodeBudgetMs)
        #expect(s.maxConnections == defaults.maxConnections)
        #expect(s.webhookURLs == [])
        #expect(s.webhookSecret == nil)
        #expect(s.logLevel == defaults.logLevel)
    }

    @Test func theShippedExampleDocumentsEveryKeyAndItsCommentedKeysParse() throws {
        let path = Self.root.appendingPathComponent("deploy/cohost.example.toml").path
        let text = try String(contentsOfFile: path, encoding: .utf8)
        func uncommenting(_ keys: [String]) -> String {
            keys.reduce(text) { $0.replacingOccurrences(of: "\n# \($1) = ", with: "\n\($1) = ") }
                .replacingOccurrences(
                    of: "webhook_url = []", with: "webhook_url = [\"https://hooks.example.com/cohost\"]")
        }
        // Secrets and optional keys are commented out; uncommented, they must still be valid TOML.
        let all = try ConfigFile.parse(
            uncommenting([
                "keys", "keys_file", "webhook_secret", "auto_create_rooms", "metrics_token", "dtls_cert", "dtls_key",
                "public_ip6", "tls_cert", "tls_key", "node_id", "node_url", "node_timeout", "public_ip", "ice_tcp_port",
                "turn_secret", "stun_url", "cluster_secret", "cluster_hosts",
            ]).replacingOccurrences(of: "replace-with-openssl-rand-hex-32", with: String(repeating: "a1", count: 16)),
            path: path)
        #expect(Set(all.entries.keys) == Set(SettingKey.allCases.map(\.fileKey)))
        // Both ways of giving keys at once is refused.
        #expect(
            refusal { _ = try ServeSettings.resolve(flags: ServeFlags(), env: [:], file: all) }?
                .hasSuffix("give the keys once") == true)
        let chosen = uncommenting(["keys", "webhook_secret", "auto_create_rooms"])
        // The example's placeholder is refused as a published secret, as an operator's copy left unedited would be.
        #expect(
            refusal {
                _ = try ServeSettings.resolve(
                    flags: ServeFlags(), env: [:], file: try ConfigFile.parse(chosen, path: path))
            }?.hasSuffix("is an example printed in Cohost's repository: generate one (e.g. openssl rand -hex 32)")
                == true)
        let secret = String(repeating: "a1", count: 16)
        let file = try ConfigFile.parse(
            chosen.replacingOccurrences(of: "replace-with-openssl-rand-hex-32", with: secret), path: path)
        let s = try ServeSettings.resolve(flags: ServeFlags(), env: [:], file: file)
        #expect(s.keys == "prod1:change-me-to-a-long-random-secret")
        #expect(s.webhookSecret == secret && s.autoCreateRooms == false)
        #expect(s.webhookURLs == ["https://hooks.example.com/cohost"])
    }

    @Test func aFileOnDiskIsReadWithItsPathInOrigins() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("serveconfig-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("cohost.toml")
        try Data("# test\npublic_ip = \"198.51.100.7\"\n".utf8).write(to: url)
        let s = try ServeSettings.resolve(flags: ServeFlags(), env: [:], file: try ConfigFile.load(path: url.path))
        #expect(s.publicIP == "198.51.100.7")
        #expect(s.origin(of: .publicIP) == .file(.publicIP, path: url.path, line: 2))
        #expect("\(s.origin(of: .publicIP))" == "'public_ip' in config file \(url.path) (line 2)")
    }

    @Test func aMissingFileIsRefusedNamingIt() {
        #expect(
            refusal { _ = try ConfigFile.load(path: "/nonexistent/cohost.toml") }
                == "config file /nonexistent/cohost.toml does not exist")
    }

    @Test func quotedKeysAndInlineCommentsAreUnderstood() throws {
        let file = try ConfigFile.parse("\"rtp_port\" = 7000 # media\n'log_level' = 'debug'\n", path: "c.toml")
        #expect(file.entries["rtp_port"] == ConfigFile.Entry(value: .integer(7000), line: 1))
        #expect(file.entries["log_level"] == ConfigFile.Entry(value: .string("debug"), line: 2))
    }

    @Test func keysInsideATableAreNotMistakenForTopLevelKeys() throws {
        let file = try ConfigFile.parse("[extra]\nrtp_port = 1\n", path: "c.toml")
        #expect(file.entries == ["extra": ConfigFile.Entry(value: .other(typeName: "table"), line: 1)])
    }
}
