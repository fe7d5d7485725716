import Foundation
import Logging
import Media
import Testing
import TestSupport

@testable import Publishing

/// Recordings in fragmented MP4 and MPEG-TS, written by libavformat from real encoder output: readable while the
/// output is open (what `kill -9` leaves) to within a fragment, whole once it stops, the same frames as the tags.
@Suite("MP4 and MPEG-TS file outputs")
struct MuxedFileOutputTests {
    let logger = Logger(label: "test.publishing")
    static let red = YUVColor(r: 200, g: 40, b: 40)

    private func path(_ ext: String) -> String { NSTemporaryDirectory() + "cohost-muxed-\(UUID().uuidString).\(ext)" }

    private func packetCounts(_ path: String) throws -> [Int] {
        let result = try run(
            "ffprobe",
            ["-v", "error", "-count_packets", "-show_entries", "stream=nb_read_packets", "-of", "csv=p=0", path],
            timeout: 15)
        #expect(result.status == 0, "ffprobe: \(result.stderr)")
        return String(decoding: result.stdout, as: UTF8.self).split(whereSeparator: \.isNewline).compactMap { Int($0) }
    }

    private func duration(_ path: String) throws -> Double {
        let result = try run(
            "ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", path], timeout: 15)
        return Double(String(decoding: result.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
            ?? 0
    }

    private func write(_ programme: EncodedProgramme, to path: String, stop: Bool = true) -> FileOutput {
        let output = FileOutput(
            id: "m", url: "file://" + path, options: OutputOptions(queueLimitMs: 10_000), logger: logger,
            onStateChange: { _ in })
        output.start(headers: programme.headers)
        for tag in programme.tags { output.send(tag) }
        #expect(
            StateRecorder.wait(timeout: 10) { output.stats.sentTags >= programme.tags.count })
        if stop { output.stop() }
        return output
    }

    @Test(
        "a fragmented MP4 holds every frame and plays the picture and the tone; cut while open, it plays to the last fragment"
    )
    func fragmentedMP4() throws {
        let programme = try EncodedProgramme(segments: [(4, Self.red)])
        let file = path("mp4")
        defer { try? FileManager.default.removeItem(atPath: file) }
        let output = write(programme, to: file, stop: false)
        // What a kill leaves: the file as it is now, the fragment being filled not yet in it.
        let cut = path("mp4")
        defer { try? FileManager.default.removeItem(atPath: cut) }
        try FileManager.default.copyItem(atPath: file, toPath: cut)
        let cutDuration = try duration(cut)
        #expect(cutDuration >= 3.5 && cutDuration <= 4.1, "the open file plays \(cutDuration) s of 4")
        let decode = try run("ffmpeg", ["-v", "error", "-nostdin", "-i", cut, "-f", "null", "-"], timeout: 30)
        #expect(decode.status == 0 && decode.stderr.isEmpty, "\(decode.stderr)")
        output.stop()
        #expect(output.state == .disconnected)

        let videoFrames = programme.tags.filter { $0.kind == .video }.count
        let audioFrames = programme.tags.filter { $0.kind == .audio }.count
        #expect(try packetCounts(file) == [videoFrames, audioFrames])
        let streams = try ffprobeStreams(url: file)
        #expect(streams.map(\.codec) == ["h264", "aac"])
        #expect(streams.first?.width == 320 && streams.first?.height == 240)
        let picture = try decodeFirstVideoFrameRGB(path: file, width: 32, height: 24)
        #expect(RGB.isClose(picture, to: (200, 40, 40)), "mean colour \(RGB.mean(picture))")
        let samples = try decodeAudioS16Mono(url: file, seconds: 1.5)
        let window = Array(samples.dropFirst(4800).prefix(24_000))
        let tone = Goertzel.power(samples: window, sampleRate: 48_000, frequency: 440)
        let elsewhere = Goertzel.power(samples: window, sampleRate: 48_000, frequency: 1000)
        #expect(tone > 0.01 && tone > 100 * elsewhere, "440 Hz power \(tone), 1 kHz power \(elsewhere)")
        // A fragment every half second: the movie fragments ffprobe lists.
        let boxes = try run("ffprobe", ["-v", "trace", "-i", file], timeout: 15).stderr
        let fragments = boxes.components(separatedBy: "type:'moof'").count - 1
        #expect(fragments >= 8, "\(fragments) fragments in 4 s")
    }

    @Test("an MPEG-TS file holds every frame, readable while the output is open")
    func mpegTS() throws {
        let programme = try EncodedProgramme(segments: [(2, Self.red)])
        let file = path("ts")
        defer { try? FileManager.default.removeItem(atPath: file) }
        let output = write(programme, to: file, stop: false)
        let videoFrames = programme.tags.filter { $0.kind == .video }.count
        let audioFrames = programme.tags.filter { $0.kind == .audio }.count
        // ffprobe lists a transport stream's streams twice: in its program, then on their own.
        let counts = Array(try packetCounts(file).suffix(2))
        #expect(counts == [videoFrames, audioFrames], "\(counts) of \([videoFrames, audioFrames])")
        output.stop()
        #expect(try ffprobeStreams(url: file).map(\.codec) == ["h264", "aac"])
        let picture = try decodeFirstVideoFrameRGB(path: file, width: 32, height: 24)
        #expect(RGB.isClose(picture, to: (200, 40, 40)), "mean colour \(RGB.mean(picture))")
    }

    @Test("an existing file is never overwritten, in any container")
    func existingFile() throws {
        let file = path("mp4")
        try Data("keep".utf8).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let programme = try EncodedProgramme(segments: [(0.5, Self.red)])
        let output = FileOutput(
            id: "x", url: "file://" + file, options: OutputOptions(), logger: logger, onStateChange: { _ in })
        output.start(headers: programme.headers)
        #expect(StateRecorder.wait(timeout: 5) { output.state == .error })
        output.stop()
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "keep")
    }
}

/// srt:// output URLs: what is checked before anything connects, and what libavformat is given.
@Suite("SRT output URLs")
struct SRTOutputURLTests {
    @Test("a usable URL, and libavformat's: caller, live, 1316-byte payloads, latency in microseconds")
    func target() {
        let url = "srt://127.0.0.1:9000?streamid=show/1&latency=200&passphrase=0123456789ab"
        #expect(OutputURL.srtProblem(url) == nil)
        #expect(
            OutputURL.srtTarget(url, peerIdleTimeoutMs: 2000)
                == "srt://127.0.0.1:9000?mode=caller&transtype=live&pkt_size=1316&peer_idle_timeout=2000000"
                + "&streamid=show/1&latency=200000&passphrase=0123456789ab")
        #expect(OutputURL.srtHost("srt://[::1]:9000") == "::1")
    }

    @Test("refused: no port, a path, unknown parameters, short passphrases, out-of-range latency")
    func problems() {
        #expect(OutputURL.srtProblem("srt://127.0.0.1")?.contains("port") == true)
        #expect(OutputURL.srtProblem("srt://127.0.0.1:9000/live")?.contains("path") == true)
        #expect(OutputURL.srtProblem("srt://127.0.0.1:9000?mode=listener")?.contains("unknown parameter mode") == true)
        #expect(OutputURL.srtProblem("srt://127.0.0.1:9000?passphrase=short")?.contains("10 to 79") == true)
        #expect(OutputURL.srtProblem("srt://127.0.0.1:9000?latency=99999")?.contains("latency") == true)
        #expect(OutputURL.srtProblem("srt://:9000") == "no host")
        #expect(OutputURL.srtProblem("srt://127.0.0.1:9000?streamid=a b") != nil)
    }

    @Test("a host is resolved here, so the destination rules judge the address libsrt connects to")
    func resolved() throws {
        #expect(try SRTOutputConnection.resolve("127.0.0.9") == "127.0.0.9")
        #expect(["127.0.0.1", "::1"].contains(try SRTOutputConnection.resolve("localhost")))
    }

    @Test("the passphrase is never shown")
    func redacted() {
        #expect(
            redactedURL("srt://127.0.0.1:9000?streamid=show&passphrase=0123456789ab&latency=200")
                == "srt://127.0.0.1:9000?streamid=show&passphrase=…&latency=200")
    }

    @Test("makeOutput takes srt:// and refuses a host the rules refuse")
    func factory() throws {
        let output = try makeOutput(
            id: "s", url: "srt://srt.example:9000?streamid=x", logger: Logger(label: "t"), onStateChange: { _ in })
        #expect(output is StreamPublisher)
        #expect(throws: OutputError.self) {
            _ = try makeOutput(
                id: "s", url: "srt://127.0.0.1:9000?mode=caller", logger: Logger(label: "t"), onStateChange: { _ in })
        }
        #expect(throws: OutputError.self) {
            _ = try makeOutput(
                id: "s", url: "srt://169.254.169.254:9000", logger: Logger(label: "t"), onStateChange: { _ in })
        }
    }
}
