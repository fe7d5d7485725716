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
        let output = FileOutput(id: "f", url: "file://" + path, logger: logger, onStateChange: recorder.handler,
                                queueLimitMs: 5000)
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
        let output = FileOutput(id: "a", url: "file://" + path, logger: logger, onStateChange: { _, _ in })
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
        let output = FileOutput(id: "u", url: "file:///nonexistent-dir-\(UUID().uuidString)/x.flv", logger: logger,
                                onStateChange: recorder.handler)
        output.start(headers: [])
        #expect(StateRecorder.wait(timeout: 2) { output.state == .error })
        #expect(output.lastMessage?.hasSuffix("No such file or directory") == true)
        output.stop()
        #expect(output.state == .error)
        #expect(recorder.states == [.connecting, .error])
    }
}
