import Foundation
import Testing
@testable import Publishing

/// Unit tests of the address checks themselves: nothing here connects anywhere.
@Suite struct DestinationPolicyTests {
    @Test func linkLocalAndMetadataAddressesAreAlwaysRefused() throws {
        let open = DestinationPolicy()
        for host in ["169.254.169.254", "169.254.0.1", "fe80::1", "[fe80::abcd]", "::ffff:169.254.169.254"] {
            #expect(open.refusal(host: host)?.contains("link-local or metadata") == true, "\(host)")
            #expect(DestinationPolicy.alwaysRefusedHost(host) != nil, "\(host)")
        }
        let everything = try DestinationPolicy(allowing: ["0.0.0.0/0", "::/0"])
        #expect(everything.refusal(host: "169.254.169.254") != nil)
        #expect(everything.refusal(host: "rtmp.example", addresses: [try #require(IPAddress("169.254.1.1"))]) != nil)
        #expect(open.refusal(host: "rtmp.example") == nil)
        #expect(open.refusal(host: "169.253.255.255") == nil && open.refusal(host: "2001:4860::1") == nil)
    }

    @Test func withoutAListEveryInternalRangeIsRefusedAndOnlyItsEdgesPass() throws {
        let open = DestinationPolicy()
        let internalHosts = [
            "127.0.0.1", "127.255.255.254", "::1", "0.0.0.0", "0.255.255.255", "::", "10.0.0.1", "10.255.255.255",
            "172.16.0.1", "172.31.255.255", "192.168.0.1", "192.168.255.255", "100.64.0.1", "100.127.255.255",
            "192.0.0.8", "198.18.0.1", "198.19.255.255", "224.0.0.1", "239.255.255.250", "240.0.0.1",
            "255.255.255.255", "fc00::1", "fd12:3456::1", "fec0::1", "ff02::1", "::ffff:10.0.0.1",
            "::ffff:127.0.0.1", "64:ff9b::a00:1", "64:ff9b::7f00:1", "::10.0.0.1",
        ]
        for host in internalHosts {
            #expect(open.refusal(host: host)?.contains("internal address") == true, "\(host)")
            #expect(try #require(IPAddress(host)).isInternal, "\(host)")
        }
        let publicHosts = [
            "9.255.255.255", "11.0.0.1", "172.15.255.255", "172.32.0.1", "192.167.255.255", "192.169.0.1",
            "100.63.255.255", "100.128.0.1", "198.17.255.255", "198.20.0.1", "223.255.255.255", "1.1.1.1",
            "2001:4860:4860::8888", "fbff::1", "fe00::1", "64:ff9b::808:808", "::ffff:8.8.8.8",
        ]
        for host in publicHosts {
            #expect(open.refusal(host: host) == nil, "\(host)")
            #expect(try !#require(IPAddress(host)).isInternal, "\(host)")
        }
        // A name is judged by every address it resolves to.
        let name = "stream.example"
        #expect(open.refusal(host: name, addresses: [try #require(IPAddress("8.8.8.8"))]) == nil)
        #expect(
            open.refusal(
                host: name, addresses: [try #require(IPAddress("8.8.8.8")), try #require(IPAddress("10.1.1.1"))])
                != nil)
        // Dev mode: loopback, and nothing else internal.
        let dev = DestinationPolicy(allowsLoopback: true)
        #expect(dev.refusal(host: "127.0.0.1") == nil && dev.refusal(host: "::1") == nil)
        #expect(dev.refusal(host: name, addresses: [try #require(IPAddress("127.0.0.1"))]) == nil)
        #expect(dev.refusal(host: "10.0.0.1") != nil && dev.refusal(host: "169.254.169.254") != nil)
        // A list admits what it names, internal or not, and nothing else.
        let listed = try DestinationPolicy(allowing: ["10.0.0.0/8"], setting: "webhook_hosts")
        #expect(listed.refusal(host: "10.2.3.4") == nil)
        #expect(listed.refusal(host: "8.8.8.8") == "'8.8.8.8' is not among the hosts webhook_hosts allows")
    }

    @Test func anAllowListAdmitsItsHostsAndNetworksOnly() throws {
        let policy = try DestinationPolicy(allowing: ["rtmp.example", "127.0.0.0/30", "::1"])
        #expect(policy.refusal(host: "RTMP.example") == nil)
        #expect(policy.refusal(host: "127.0.0.3") == nil && policy.refusal(host: "::1") == nil)
        #expect(policy.refusal(host: "127.0.0.4") == "'127.0.0.4' is not among the hosts output_hosts allows")
        // A name outside the list is judged by where it resolves, at connect time.
        #expect(policy.refusal(host: "other.example") == nil)
        #expect(policy.refusal(host: "other.example", addresses: [try #require(IPAddress("127.0.0.2"))]) == nil)
        #expect(policy.refusal(host: "other.example", addresses: [try #require(IPAddress("127.0.0.9"))]) != nil)
        #expect(policy.refusal(host: "other.example", addresses: []) != nil)
        // Only names: a name not listed is refused at once.
        let names = try DestinationPolicy(allowing: ["rtmp.example"])
        #expect(names.refusal(host: "other.example") != nil)
        #expect(
            policy.allows(host: "127.0.0.1") && !policy.allows(host: "127.0.0.9")
                && !DestinationPolicy().allows(host: "x"))
    }

    @Test func anAllowListEntryThatIsNeitherANameNorANetworkIsRefused() {
        #expect(throws: OutputRulesError.self) { try DestinationPolicy(allowing: ["10.0.0.0/33"]) }
        #expect(throws: OutputRulesError.self) { try DestinationPolicy(allowing: ["http://rtmp.example"]) }
        #expect(throws: OutputRulesError.self) { try DestinationPolicy(allowing: ["-bad-.example"]) }
    }

    @Test func theHostOfAnRTMPURLIsFoundBehindCredentialsPortsAndBrackets() {
        #expect(OutputURL.rtmpHost("rtmp://user:pw@169.254.169.254:1935/live/k") == "169.254.169.254")
        #expect(OutputURL.rtmpHost("rtmps://[fe80::1]:443/app/k") == "fe80::1")
        #expect(OutputURL.rtmpHost("rtmp://Rtmp.Example/live/k") == "Rtmp.Example")
    }

    @Test func redactedURLsHideCredentialsAndStreamKeys() {
        #expect(redactedURL("rtmp://alice:s3cret@rtmp.example/live/streamkey") == "rtmp://…@rtmp.example/live/st…")
        #expect(redactedURL("rtmp://rtmp.example/live/streamkey") == "rtmp://rtmp.example/live/st…")
        #expect(redactedURL("file://show.flv") == "file://show.flv")
    }
}

@Suite struct RecordingsDirectoryTests {
    /// A fresh recordings directory inside a scratch directory, and the scratch directory.
    static func scratch() throws -> (RecordingsDirectory, String) {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("cohost-rec-\(UUID().uuidString)").path
        let recordings = try RecordingsDirectory(creating: root + "/recordings")
        return (recordings, root)
    }

    func refusal(_ result: Result<String, OutputError>) -> String? {
        if case .failure(.forbiddenPath(_, let reason)) = result { return reason }
        return nil
    }

    @Test func aFileURLNamesAFileInsideTheDirectory() throws {
        let (dir, root) = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        #expect(dir.path(for: "file://show.flv") == .success(dir.path + "/show.flv"))
        #expect(dir.path(for: "file://" + dir.path + "/show.flv") == .success(dir.path + "/show.flv"))
        try FileManager.default.createDirectory(atPath: dir.path + "/2026", withIntermediateDirectories: false)
        #expect(dir.path(for: "file://2026/show.flv") == .success(dir.path + "/2026/show.flv"))
    }

    @Test func aDirectoryConfiguredThroughALinkTakesPathsUnderEitherSpelling() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("cohost-rec-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/private/rec", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: root + "/rec", withDestinationPath: root + "/private/rec")
        let dir = try RecordingsDirectory(creating: root + "/rec")
        #expect(dir.configuredPath == root + "/rec" && dir.path.hasSuffix("/private/rec"))
        #expect(dir.path(for: "file://" + root + "/rec/show.flv") == .success(dir.path + "/show.flv"))
        #expect(dir.path(for: "file://" + dir.path + "/show.flv") == .success(dir.path + "/show.flv"))
        #expect(refusal(dir.path(for: "file://" + root + "/private/show.flv")) != nil)
    }

    @Test func pathsOutsideDotDotAndLinksOutAreRefusedAndNothingIsCreated() throws {
        let (dir, root) = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        #expect(refusal(dir.path(for: "file://" + root + "/elsewhere.flv"))?.contains("outside") == true)
        #expect(refusal(dir.path(for: "file://../elsewhere.flv"))?.contains("'..'") == true)
        // A combining mark after the slash makes one Character of "/\u{301}", not one path component.
        #expect(refusal(dir.path(for: "file://../\u{301}elsewhere.flv"))?.contains("'..'") == true)
        #expect(refusal(dir.path(for: "file://" + dir.path + "/../x.flv")) != nil)
        try FileManager.default.createSymbolicLink(atPath: dir.path + "/out", withDestinationPath: root)
        #expect(refusal(dir.path(for: "file://out/x.flv"))?.contains("link") == true)
        try FileManager.default.createSymbolicLink(atPath: dir.path + "/taken.flv", withDestinationPath: root + "/t")
        #expect(refusal(dir.path(for: "file://taken.flv"))?.contains("exists") == true)
        #expect(refusal(dir.path(for: "file://missing/x.flv"))?.contains("does not exist") == true)
        #expect(try FileManager.default.contentsOfDirectory(atPath: root).sorted() == ["recordings"])
    }

    @Test func theWriterNeverTruncatesAnExistingFileNorFollowsALink() throws {
        let (dir, root) = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let existing = dir.path + "/other-room.flv"
        FileManager.default.createFile(atPath: existing, contents: Data("recorded".utf8))
        #expect(throws: OutputIOError.self) { _ = try RecordingFile(path: existing) }
        #expect(FileManager.default.contents(atPath: existing) == Data("recorded".utf8))
        try FileManager.default.createSymbolicLink(atPath: dir.path + "/link.flv", withDestinationPath: root + "/x.flv")
        #expect(throws: OutputIOError.self) { _ = try RecordingFile(path: dir.path + "/link.flv") }
        #expect(!FileManager.default.fileExists(atPath: root + "/x.flv"))
    }
}
