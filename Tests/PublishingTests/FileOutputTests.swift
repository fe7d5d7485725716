import Foundation
import Logging
import Media
import Testing
import TestSupport
@testable import Publishing

@Suite("FLV file output")
struct FileOutputTests {
    let logger = Logger(label: "test.publishing")
    static let red = YUVColor(r: 200, g: 40, b: 40)

    private func temporaryPath(_ name: String) -> String {
        NSTemporaryDirectory() + "cohost-\(name)-\(UUID().uuidString).flv"
    }

    @Test("a written file is read by ffprobe as h264 320x240 + aac, with the right picture and tone")
    func writesPlayableFile() throws {
        let programme = try EncodedProgramme(segments: [(2, Self.red)], dataEveryMs: 200)
        let path = temporaryPath("file")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let recorder = StateRecorder()
        let output = FileOutput(
            id: "f", url: "file://" + path, options: OutputOptions(queueLimitMs: 5000),
            logger: logger, onStateChange: recorder.handler)
        output.start(headers: programme.headers)
        #expect(StateRecorder.wait(timeout: 2) { output.state == .connected })
        for tag in programme.tags { output.send(tag) }
        output.stop()

        #expect(output.state == .disconnected)
        #expect(recorder.states == [.connecting, .connected, .disconnecting, .disconnected])
        let stats = output.stats
        #expect(stats.sentTags == programme.headers.count + programme.tags.count)
        #expect(stats.droppedVideoTags == 0 && stats.droppedAudioTags == 0 && stats.queuedTags == 0)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(Array(bytes.prefix(13)) == FLVMuxer.fileHeader(hasVideo: true, hasAudio: true))
        #expect(bytes.count == 13 + (programme.headers + programme.tags).reduce(0) { $0 + $1.serializedSize })
        #expect(stats.sentBytes == bytes.count - 13)

        let streams = try ffprobeStreams(url: path)
        // The onVoiceLevels script tags show up as ffmpeg's data stream (no codec name).
        #expect(streams.map(\.codec) == ["h264", "aac", ""])
        #expect(streams.map(\.type) == ["video", "audio", "data"])
        #expect(streams.first?.width == 320 && streams.first?.height == 240)
        let picture = try decodeFirstVideoFrameRGB(path: path, width: 32, height: 24, seekSeconds: nil)
        #expect(RGB.isClose(picture, to: (200, 40, 40)), "mean colour \(RGB.mean(picture))")
        let samples = try decodeAudioS16Mono(url: path, seconds: 1.5)
        let window = Array(samples.dropFirst(4800).prefix(24_000))
        #expect(window.count == 24_000)
        let tone = Goertzel.power(samples: window, sampleRate: 48_000, frequency: 440)
        let elsewhere = Goertzel.power(samples: window, sampleRate: 48_000, frequency: 1000)
        #expect(tone > 0.01 && tone > 100 * elsewhere, "440 Hz power \(tone), 1 kHz power \(elsewhere)")
    }

    @Test("an audio-only stream writes an audio-only FLV")
    func audioOnly() throws {
        let programme = try EncodedProgramme(segments: [(1, Self.red)], audioOnly: true)
        #expect(programme.tags.allSatisfy { $0.kind == .audio })
        let path = temporaryPath("audio")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let output = FileOutput(id: "a", url: "file://" + path, logger: logger, onStateChange: { _ in })
        output.start(headers: programme.headers)
        for tag in programme.tags { output.send(tag) }
        output.stop()
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(bytes[4] == 0x04)
        let streams = try ffprobeStreams(url: path)
        #expect(streams.map(\.codec) == ["aac"])
        #expect(streams.map(\.type) == ["audio"])
    }

    @Test("a file that cannot be created is a final error with the system's reason")
    func unwritable() {
        let recorder = StateRecorder()
        let output = FileOutput(
            id: "u", url: "file:///nonexistent-dir-\(UUID().uuidString)/x.flv", logger: logger,
            onStateChange: recorder.handler)
        output.start(headers: [])
        #expect(StateRecorder.wait(timeout: 2) { output.state == .error })
        #expect(output.lastMessage?.hasSuffix("No such file or directory") == true)
        output.stop()
        #expect(output.state == .error)
        #expect(recorder.states == [.connecting, .error])
    }

    /// Packets per stream that ffprobe reads from the file, in stream order.
    private func packetCounts(_ path: String) throws -> [Int] {
        let result = try run(
            "ffprobe",
            [
                "-v", "error", "-count_packets", "-show_entries", "stream=nb_read_packets",
                "-of", "csv=p=0", path,
            ], timeout: 15)
        #expect(result.status == 0, "ffprobe: \(result.stderr)")
        return String(decoding: result.stdout, as: UTF8.self).split(whereSeparator: \.isNewline).compactMap { Int($0) }
    }

    @Test("every tag is in the file as soon as it is written: ffprobe reads all of it while the output is still open")
    func readableWhileOpen() throws {
        // What a SIGKILL leaves behind is what is in the kernel now: there is no user-space buffer to lose.
        let programme = try EncodedProgramme(segments: [(2, Self.red)])
        let path = temporaryPath("open")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let output = FileOutput(
            id: "o", url: "file://" + path, options: OutputOptions(queueLimitMs: 5000), logger: logger,
            onStateChange: { _ in })
        output.start(headers: programme.headers)
        for tag in programme.tags { output.send(tag) }
        #expect(
            StateRecorder.wait(timeout: 5) { output.stats.sentTags == programme.headers.count + programme.tags.count })
        let videoFrames = programme.tags.filter { $0.kind == .video }.count
        let audioFrames = programme.tags.filter { $0.kind == .audio }.count
        #expect(try packetCounts(path) == [videoFrames, audioFrames])
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int
        #expect(size == 13 + (programme.headers + programme.tags).reduce(0) { $0 + $1.serializedSize })
        output.stop()
        #expect(output.state == .disconnected)
        #expect(output.stats.sentVideoFrames == videoFrames && output.stats.sentAudioFrames == audioFrames)
    }

    @Test("a file opened mid-stream asks for a keyframe and starts its video at one")
    func startsAtKeyframe() throws {
        let programme = try EncodedProgramme(segments: [(2, Self.red)])
        // Start half a second in: the first video tags are dependent frames, the next keyframe is at 1 s.
        let midStream = programme.tags.drop { $0.timestampMs < 500 }
        let beforeKeyframe = midStream.prefix { !($0.kind == .video && $0.isKeyframe) }
        let skipped = beforeKeyframe.filter { $0.kind == .video }.count
        #expect(skipped == 12)
        // Audio more than 40 ms older than that keyframe goes too, so sound and picture start together.
        let keyframeMs = try #require(midStream.first { $0.kind == .video && $0.isKeyframe }).timestampMs
        let skippedAudio = beforeKeyframe.filter {
            $0.kind == .audio && $0.timestampMs + StartGate.alignmentMs < keyframeMs
        }.count
        #expect(keyframeMs == 1000 && skippedAudio == 21)
        let path = temporaryPath("mid")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let keyframes = KeyframeRequestCounter()
        let output = FileOutput(
            id: "m", url: "file://" + path, options: OutputOptions(queueLimitMs: 5000), logger: logger,
            onKeyframeNeeded: keyframes.handler, onStateChange: { _ in })
        for tag in midStream { output.send(tag) }
        output.start(headers: programme.headers)
        output.stop()
        #expect(keyframes.count == 1)
        #expect(output.stats.skippedVideoTags == skipped && output.stats.skippedAudioTags == skippedAudio)
        #expect(output.stats.droppedVideoTags == 0 && output.stats.droppedAudioTags == 0)
        #expect(output.stats.sentVideoFrames == midStream.filter { $0.kind == .video }.count - skipped)
        #expect(output.stats.sentAudioFrames == midStream.filter { $0.kind == .audio }.count - skippedAudio)
        let picture = try decodeFirstVideoFrameRGB(path: path, width: 32, height: 24, seekSeconds: nil)
        #expect(RGB.isClose(picture, to: (200, 40, 40)), "mean colour \(RGB.mean(picture))")
    }
}
