import Foundation
import MediaSources
import Publishing
import Testing

@testable import Rooms

/// The checks a pulled source's request passes before anything is opened, and the only form of its URL that is
/// ever shown.
@Suite struct SourceRequestTests {
    static func media() throws -> (MediaDirectory, String) {
        let path = NSTemporaryDirectory() + "cohost-media-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path + "/jingles", withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: path + "/jingles/ding.wav", contents: Data([1, 2, 3]))
        FileManager.default.createFile(atPath: NSTemporaryDirectory() + "cohost-outside.wav", contents: Data([1]))
        try FileManager.default.createSymbolicLink(
            atPath: path + "/escape.wav", withDestinationPath: NSTemporaryDirectory() + "cohost-outside.wav")
        return (try MediaDirectory(creating: path), path)
    }

    static let room = try! RoomConfigRequest(name: "r").resolve()

    @Test func credentialsAndSecretsNeverShowInTheURL() {
        #expect(
            SourceURL.redacted("rtsp://admin:hunter2@10.0.0.7:554/Streaming/101")
                == "rtsp://***@10.0.0.7:554/Streaming/101")
        #expect(SourceURL.redacted("rtsp://cam.local/live") == "rtsp://cam.local/live")
        #expect(
            SourceURL.redacted("srt://127.0.0.1:9000?streamid=show&passphrase=0123456789ab&latency=200")
                == "srt://127.0.0.1:9000?streamid=show&passphrase=***&latency=200")
        #expect(
            SourceURL.redacted("https://u:p@cdn.example/live.m3u8?token=abc")
                == "https://***@cdn.example/live.m3u8?token=***")
        #expect(SourceURL.redacted("rtsp://a@b:c@host/x") == "rtsp://***@host/x")
        #expect(SourceLocation("rtsp://admin:pw@[::1]:8554/cam")?.host == "::1")
        #expect(SourceLocation("srt://127.0.0.1:9000?streamid=a/b")?.host == "127.0.0.1")
    }

    @Test func aRequestBecomesAReaderPlanWithItsTransportAndAllowLists() throws {
        let (media, path) = try Self.media()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let rules = SourceRules(mediaDirectory: media)
        let camera = try SourceRequest(userId: "door", url: "rtsp://u:p@cam.example:8554/cam", transport: "udp")
            .plan(rules: rules, room: Self.room)
        #expect(camera.input.options["rtsp_transport"] == "udp")
        #expect(camera.input.options["protocol_whitelist"] == "rtsp,rtsps,rtp,srtp,udp,tcp,tls")
        #expect(
            camera.input.latencyMs == 500 && !camera.input.isFile
                && camera.shownURL == "rtsp://***@cam.example:8554/cam")
        let hls = try SourceRequest(userId: "show", url: "http://cdn.example/live.m3u8").plan(
            rules: rules, room: Self.room)
        #expect(hls.input.options["protocol_whitelist"] == "http,https,tcp,tls,crypto")
        #expect(hls.input.options["max_redirects"] == "0")
        let jingle = try SourceRequest(userId: "ding", url: "file://jingles/ding.wav", gain: 0.5)
            .plan(rules: rules, room: Self.room)
        #expect(jingle.input.location == media.path + "/jingles/ding.wav" && jingle.input.isFile)
        #expect(jingle.input.options["protocol_whitelist"] == "file" && jingle.input.latencyMs == 400)
        #expect(jingle.gain == 0.5)
    }

    @Test func aPushGetsAFreshKeyThatOnlyAdminsSee() throws {
        let rules = SourceRules()
        let one = try SourceRequest(userId: "obs", listen: "srt").planPush(
            rules: rules, room: Self.room, host: "203.0.113.7", port: 7885)
        let two = try SourceRequest(userId: "obs", listen: "srt").planPush(
            rules: rules, room: Self.room, host: "203.0.113.7", port: 7885)
        let key = try #require(one.streamID?.split(separator: "/").last)
        #expect(one.streamID == "r/\(key)" && key.count == 32 && key.allSatisfy(\.isHexDigit))
        #expect(one.streamID != two.streamID)
        #expect(one.publishURL == "srt://203.0.113.7:7885?streamid=r/\(key)")
        #expect(one.shownURL == "srt://203.0.113.7:7885?streamid=r/***")
        #expect(one.input.pushed && one.input.latencyMs == 500 && one.listen == "srt")
        let rtmp = try SourceRequest(userId: "obs", listen: "rtmp").planPush(
            rules: rules, room: Self.room, host: "203.0.113.7", port: 1935)
        let rtmpKey = try #require(rtmp.streamID?.split(separator: "/").last)
        #expect(rtmp.publishURL == "rtmp://203.0.113.7:1935/r/\(rtmpKey)" && rtmp.listen == "rtmp")
        #expect(rtmp.shownURL == "rtmp://203.0.113.7:1935/r/***")
        for request in [
            SourceRequest(userId: "obs", listen: "srt", loop: true),
            SourceRequest(userId: "obs", listen: "srt", transport: "udp"),
            SourceRequest(userId: "obs", listen: "srt", gain: 5),
        ] {
            #expect(throws: RoomError.self) {
                try request.planPush(rules: rules, room: Self.room, host: "h", port: 1)
            }
        }
    }

    @Test func refusedRequestsSayWhy() throws {
        let (media, path) = try Self.media()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let rules = SourceRules(mediaDirectory: media)
        func code(_ request: SourceRequest, _ rules: SourceRules? = nil) -> String? {
            do {
                _ = try request.plan(rules: rules ?? SourceRules(mediaDirectory: media), room: Self.room)
                return nil
            } catch { return error.code }
        }
        #expect(code(SourceRequest(userId: "a", listen: "rtmp")) == "not_implemented")
        #expect(code(SourceRequest(userId: "a", listen: "srt")) == "not_implemented")
        #expect(code(SourceRequest(userId: "a", listen: "rist")) == "invalid_source")
        #expect(code(SourceRequest(userId: "a", listen: "rtmp")) == "not_implemented")
        #expect(code(SourceRequest(userId: "a", url: "srt://h:1", listen: "srt")) == "invalid_source")
        #expect(code(SourceRequest(userId: "a")) == "invalid_source")
        #expect(code(SourceRequest(userId: "a", url: "gopher://x/y")) == "invalid_source")
        #expect(code(SourceRequest(userId: "a", url: "rtmp://h/a/b", transport: "tcp")) == "invalid_source")
        #expect(code(SourceRequest(userId: "a", url: "rtsp://h/a", latencyMs: 9000)) == "invalid_source")
        #expect(code(SourceRequest(userId: "a", url: "rtsp://h/a", gain: .nan)) == "invalid_source")
        #expect(code(SourceRequest(userId: "a", url: "rtsp://h/a\r\nx")) == "invalid_source")
        #expect(code(SourceRequest(userId: "a", url: "rtsp://169.254.169.254/a")) == "forbidden_destination")
        // A host followed by anything but a port: read one way here and another by libavformat.
        #expect(code(SourceRequest(userId: "a", url: "rtsp://[2001:db8::1]evil.example/a")) == "invalid_source")
        // An internal address literal, without a list naming it.
        #expect(code(SourceRequest(userId: "a", url: "rtsp://10.0.0.7/a")) == "forbidden_destination")
        #expect(code(SourceRequest(userId: "a", url: "http://[::1]:8080/a.m3u8")) == "forbidden_destination")
        let listed = try SourceRules(destinations: DestinationPolicy(allowing: ["10.0.0.0/8"]))
        #expect(code(SourceRequest(userId: "a", url: "rtsp://10.0.0.7/a"), listed) == nil)
        #expect(code(SourceRequest(userId: "a", url: "rtsp://127.0.0.1/a"), listed) == "forbidden_destination")
        #expect(code(SourceRequest(userId: "no spaces", url: "rtsp://h/a")) == "invalid_user")
        #expect(code(SourceRequest(userId: "a", url: "file://../x.wav")) == "forbidden_path")
        #expect(code(SourceRequest(userId: "a", url: "file://escape.wav")) == "forbidden_path")
        #expect(code(SourceRequest(userId: "a", url: "file://jingles")) == "forbidden_path")
        #expect(code(SourceRequest(userId: "a", url: "file:///etc/hostname")) == "forbidden_path")
        #expect(code(SourceRequest(userId: "a", url: "file://none.wav")) == "not_found")
        #expect(code(SourceRequest(userId: "a", url: "file://jingles/ding.wav"), SourceRules()) == "forbidden")
        _ = rules
    }
}
