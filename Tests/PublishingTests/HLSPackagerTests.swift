import Foundation
import Logging
import Media
import Testing
import TestSupport

@testable import Publishing

/// The HLS packager on real encoder output (the project's H.264 and AAC encoders): where segments and parts are
/// cut, what the playlist says about them, and that what is served decodes.
@Suite("HLS packaging")
struct HLSPackagerTests {
    static let green = YUVColor(r: 40, g: 200, b: 40)
    static let start = Date(timeIntervalSince1970: 1_795_900_000)

    /// The programme packaged whole, the output's stream and the number of keyframe requests.
    final class Packaged {
        let stream: HLSStream
        var keyframeRequests = 0
        init(_ options: HLSOptions) { stream = HLSStream(options: options) }
    }

    static func package(
        _ tags: [FLVTag], headers: [FLVTag], options: HLSOptions, recording: HLSRecording? = nil
    ) throws -> Packaged {
        let packaged = Packaged(options)
        let packager = HLSPackager(
            headers: headers, options: options, stream: packaged.stream, recording: recording,
            now: { Self.start }
        ) { packaged.keyframeRequests += 1 }
        for tag in tags { try packager.write(tag) }
        try packager.finish()
        return packaged
    }

    /// (EXTINF durations, parts as (segment, duration, independent)) of a playlist.
    static func durations(_ playlist: String) -> (segments: [Double], parts: [(msn: Int, ms: Int, independent: Bool)]) {
        var segments: [Double] = []
        var parts: [(Int, Int, Bool)] = []
        for line in playlist.split(separator: "\n") {
            if line.hasPrefix("#EXTINF:") {
                segments.append(Double(line.dropFirst(8).dropLast()) ?? -1)
            } else if line.hasPrefix("#EXT-X-PART:DURATION=") {
                let fields = line.dropFirst("#EXT-X-PART:".count).split(separator: ",")
                let seconds = Double(fields[0].dropFirst("DURATION=".count)) ?? -1
                let uri = fields[1].dropFirst("URI=\"p".count).prefix { $0 != "." }
                parts.append((Int(uri) ?? -1, Int((seconds * 1000).rounded()), line.hasSuffix("INDEPENDENT=YES")))
            }
        }
        return (segments, parts)
    }

    static func media(_ file: HLSStream.File) -> [UInt8] {
        if case .media(let bytes, _) = file { return bytes }
        return []
    }

    static func videoFrames(_ bytes: [UInt8]) throws -> Int {
        let path = NSTemporaryDirectory() + "cohost-hls-\(UUID().uuidString).mp4"
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let result = try run(
            "ffprobe",
            [
                "-v", "error", "-select_streams", "v", "-count_frames", "-show_entries", "stream=nb_read_frames",
                "-of", "csv=p=0", path,
            ], timeout: 15)
        #expect(result.status == 0, "ffprobe: \(result.stderr)")
        return Int(String(decoding: result.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
            ?? -1
    }

    @Test(
        "segments of a 30 fps programme with a keyframe each second are 2.000 s from keyframe to keyframe; parts end before the frame that would pass the part target"
    )
    func segmentsAndParts() throws {
        let programme = try EncodedProgramme(segments: [(6, Self.green)], fps: 30)
        let packaged = try Self.package(
            programme.tags, headers: programme.headers, options: HLSOptions(windowSegments: 10))
        let playlist = try #require(packaged.stream.playlist())
        let (segments, parts) = Self.durations(playlist)
        #expect(segments == [2.0, 2.0, 2.0])
        // 9 frames of 33.3 ms make 300 ms; a tenth would end past 333 ms. 200 ms are left at a segment's end.
        #expect(parts.filter { $0.msn == 1 }.map(\.ms) == [300, 300, 300, 300, 300, 300, 200])
        #expect(parts.allSatisfy { $0.ms <= 333 })
        // Independent where a part starts at a keyframe: each segment's first (the keyframe at 1 s is inside a part).
        #expect(parts.filter { $0.msn == 1 }.map(\.independent) == [true, false, false, false, false, false, false])
        #expect(packaged.keyframeRequests == 0, "the programme's own keyframes fall on the segment boundaries")
        #expect(playlist.contains("#EXT-X-PART-INF:PART-TARGET=0.333\n"))
        #expect(playlist.contains("#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=0.999\n"))
        #expect(playlist.contains("#EXT-X-TARGETDURATION:2\n#"))
        #expect(playlist.contains("#EXT-X-PROGRAM-DATE-TIME:2026-11-28T21:06:40.000Z\n"))
        #expect(playlist.contains("#EXT-X-PROGRAM-DATE-TIME:2026-11-28T21:06:42.000Z\n"))
    }

    @Test("each part decodes after the init section alone, and a segment is its parts' bytes in order")
    func partsDecode() async throws {
        let programme = try EncodedProgramme(segments: [(4, Self.green)], fps: 30)
        let packaged = try Self.package(
            programme.tags, headers: programme.headers, options: HLSOptions(windowSegments: 10))
        let initSection = Self.media(await packaged.stream.file(named: "init0.mp4"))
        #expect(initSection.count > 100)
        var joined: [UInt8] = []
        var frames: [Int] = []
        for part in 0..<7 {
            let bytes = Self.media(await packaged.stream.file(named: "p1.\(part).m4s"))
            joined += bytes
            // Parts after the first start without a keyframe: they decode after the one before (as a player has it).
            frames.append(try Self.videoFrames(initSection + joined))
        }
        #expect(frames == [9, 18, 27, 36, 45, 54, 60])
        #expect(Self.media(await packaged.stream.file(named: "s1.m4s")) == joined)
        #expect(await packaged.stream.file(named: "p1.7.m4s") == .notFound)
        #expect(await packaged.stream.file(named: "s9.m4s") == .notFound)
        #expect(await packaged.stream.file(named: "../s1.m4s") == .notFound)
    }

    @Test("without video, parts and segments are cut at audio frames and every part is independent")
    func audioOnly() throws {
        let programme = try EncodedProgramme(segments: [(5, Self.green)], audioOnly: true)
        let packaged = try Self.package(
            programme.tags, headers: programme.headers,
            options: HLSOptions(segmentSeconds: 2, partSeconds: 0.5, windowSegments: 10))
        let (segments, parts) = Self.durations(try #require(packaged.stream.playlist()))
        // AAC frames are 21.33 ms (stamped in whole ms): a segment ends at the first frame at or past 1989 ms.
        #expect(segments.count == 3 && segments.prefix(2).allSatisfy { abs($0 - 2.0) <= 0.022 })
        #expect(parts.allSatisfy { $0.independent && $0.ms <= 500 && $0.ms >= 425 || $0.ms < 425 })
        #expect(parts.filter { $0.msn == 0 }.dropLast().allSatisfy { $0.ms >= 425 })
    }

    @Test("plain HLS lists whole segments only: no parts, no preload hint, no server control")
    func plainHLS() throws {
        let programme = try EncodedProgramme(segments: [(4, Self.green)], fps: 30)
        let packaged = try Self.package(
            programme.tags, headers: programme.headers, options: HLSOptions(partSeconds: nil))
        let playlist = try #require(packaged.stream.playlist())
        #expect(Self.durations(playlist).segments == [2.0, 2.0])
        #expect(!playlist.contains("PART") && !playlist.contains("SERVER-CONTROL"))
    }

    @Test("timestamps that start again make a discontinuity with a new init section")
    func discontinuity() async throws {
        let programme = try EncodedProgramme(segments: [(2, Self.green)], fps: 30)
        let packaged = try Self.package(
            programme.tags + programme.tags, headers: programme.headers, options: HLSOptions(windowSegments: 10))
        let playlist = try #require(packaged.stream.playlist())
        #expect(Self.durations(playlist).segments == [2.0, 2.0])
        #expect(playlist.contains("s0.m4s\n#EXT-X-DISCONTINUITY\n#EXT-X-MAP:URI=\"init1.mp4\"\n"))
        #expect(Self.media(await packaged.stream.file(named: "init1.mp4")).count > 100)
    }

    @Test("the stream keeps its window: the oldest segments go and the media sequence moves on")
    func window() async throws {
        let programme = try EncodedProgramme(segments: [(10, Self.green)], fps: 30)
        let packaged = try Self.package(
            programme.tags, headers: programme.headers, options: HLSOptions(windowSegments: 3))
        let playlist = try #require(packaged.stream.playlist())
        #expect(playlist.contains("#EXT-X-MEDIA-SEQUENCE:2\n"))
        #expect(Self.durations(playlist).segments == [2.0, 2.0, 2.0])
        #expect(await packaged.stream.file(named: "s1.m4s") == .notFound)
        #expect(Self.media(await packaged.stream.file(named: "s2.m4s")).count > 1000)
    }

    @Test("an HLS output copies the show into its directory: an init section, every segment, a VOD playlist")
    func recording() throws {
        let programme = try EncodedProgramme(segments: [(4, Self.green)], fps: 30)
        let directory = NSTemporaryDirectory() + "cohost-hls-vod-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let states = StateRecorder()
        let output = HLSOutput(
            id: "h", url: "/v1/rooms/r/hls/index.m3u8", hls: HLSOptions(vod: true),
            options: OutputOptions(queueLimitMs: 10_000), recordingDirectory: directory,
            logger: Logger(label: "test.hls"), onStateChange: states.handler)
        output.start(headers: programme.headers)
        for tag in programme.tags { output.send(tag) }
        #expect(StateRecorder.wait(timeout: 10) { output.stats.sentTags >= programme.tags.count })
        #expect(output.state == .connected)
        output.stop()
        #expect(output.state == .disconnected)
        #expect(output.stream.playlist() == nil, "a stopped output serves nothing")
        let text = try String(contentsOfFile: directory + "/index.m3u8", encoding: .utf8)
        // The server's user alone reads a recording.
        func mode(_ path: String) -> Int? {
            (try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? Int
        }
        #expect(mode(directory) == 0o700 && mode(directory + "/index.m3u8") == 0o600)
        #expect(mode(directory + "/s0.m4s") == 0o600 && mode(directory + "/init0.mp4") == 0o600)
        #expect(text.contains("#EXT-X-PLAYLIST-TYPE:VOD\n") && text.hasSuffix("#EXT-X-ENDLIST\n"))
        #expect(Self.durations(text).segments == [2.0, 2.0])
        let result = try run(
            "ffprobe",
            [
                "-v", "error", "-select_streams", "v", "-count_frames", "-show_entries", "stream=nb_read_frames",
                "-of", "csv=p=0", directory + "/index.m3u8",
            ], timeout: 20)
        // The HLS demuxer lists the stream once per program.
        #expect(String(decoding: result.stdout, as: UTF8.self).split(whereSeparator: \.isNewline).first == "120")
    }
}
