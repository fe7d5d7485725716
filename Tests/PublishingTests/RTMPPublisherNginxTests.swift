import Codecs
import Foundation
import Logging
import Media
import Testing
import TestSupport
@testable import Publishing

@Suite("RTMP publishing to a real nginx-rtmp")
struct StreamPublisherNginxTests {
    let logger = Logger(label: "test.publishing")
    static let red = YUVColor(r: 200, g: 40, b: 40)
    static let blue = YUVColor(r: 40, g: 40, b: 200)

    /// Polls ffprobe until the recording shows both streams (nginx closes it when the publisher leaves).
    private func recordedStreams(_ path: String) throws -> [(codec: String, type: String, width: Int?, height: Int?)] {
        var streams: [(codec: String, type: String, width: Int?, height: Int?)] = []
        _ = StateRecorder.wait(timeout: 5) {
            streams = (try? ffprobeStreams(url: path)) ?? []
            return streams.count == 2
        }
        return streams.count == 2 ? streams : try ffprobeStreams(url: path)
    }

    @Test("3 s of H.264 + AAC published to nginx is recorded as h264 320x240 + aac with the right content")
    func publishes() throws {
        let nginx = try NginxRTMP(record: true)
        defer { nginx.stop() }
        let programme = try EncodedProgramme(segments: [(3, Self.red)], dataEveryMs: 200)
        let recorder = StateRecorder()
        let publisher = StreamPublisher(
            id: "p", url: nginx.url(stream: "e2e"), logger: logger, destinations: .loopback,
            onStateChange: recorder.handler)
        publisher.start(headers: programme.headers)
        #expect(StateRecorder.wait(timeout: 5) { publisher.state == .connected }, "nginx log: \(nginx.errorLog)")
        // Twice real time: fast, yet a publisher thread held up 250 ms by a busy machine does not reach the queue's
        // 1 s video-drop mark (at 4x it would, and the no-drop check below would fail for the machine's sake).
        EncodedProgramme.send(programme.tags, to: publisher, speed: 2)
        publisher.stop()

        #expect(publisher.state == .disconnected)
        #expect(recorder.states == [.connecting, .connected, .disconnecting, .disconnected])
        let stats = publisher.stats
        #expect(stats.sentTags == programme.headers.count + programme.tags.count)
        #expect(stats.droppedVideoTags == 0 && stats.droppedAudioTags == 0 && stats.reconnects == 0)

        let path = nginx.recordingPath(stream: "e2e")
        let streams = try recordedStreams(path)
        #expect(streams.map(\.codec).sorted() == ["aac", "h264"], "nginx log: \(nginx.errorLog)")
        let video = streams.first { $0.type == "video" }
        #expect(video?.width == 320 && video?.height == 240)
        let picture = try decodeFirstVideoFrameRGB(path: path, width: 32, height: 24, seekSeconds: 1)
        #expect(RGB.isClose(picture, to: (200, 40, 40)), "mean colour \(RGB.mean(picture))")
        let samples = try decodeAudioS16Mono(url: path, seconds: 2)
        let window = Array(samples.dropFirst(9600).prefix(24_000))
        let tone = Goertzel.power(samples: window, sampleRate: 48_000, frequency: 440)
        let elsewhere = Goertzel.power(samples: window, sampleRate: 48_000, frequency: 1000)
        #expect(tone > 0.01 && tone > 100 * elsewhere, "440 Hz power \(tone), 1 kHz power \(elsewhere)")
    }

    @Test("after nginx restarts, the publisher reconnects and the new publish starts with headers and a keyframe")
    func reconnects() throws {
        let nginx = try NginxRTMP(record: true)
        defer { nginx.stop() }
        // Red for the first second, blue afterwards: the re-published recording must open on blue. The blue
        // part is long because how soon the publisher notices the restart and how long it backs off depend on
        // the machine's load: sending stops two keyframes after it is connected again, whenever that is.
        let programme = try EncodedProgramme(segments: [(1, Self.red), (12, Self.blue)])
        let recorder = StateRecorder()
        let keyframes = KeyframeRequestCounter()
        let publisher = StreamPublisher(
            id: "r", url: nginx.url(stream: "again"), logger: logger, destinations: .loopback,
            onKeyframeNeeded: keyframes.handler, onStateChange: recorder.handler)
        publisher.start(headers: programme.headers)
        #expect(StateRecorder.wait(timeout: 5) { publisher.state == .connected })
        let firstSecond = programme.tags.prefix { $0.timestampMs < 1000 }
        EncodedProgramme.send(firstSecond, to: publisher, speed: 4)
        #expect(StateRecorder.wait(timeout: 3) { publisher.stats.queuedTags == 0 })

        try nginx.restart()
        var keyframesSinceReconnect = 0
        EncodedProgramme.send(programme.tags.dropFirst(firstSecond.count), to: publisher, speed: 1) { tag in
            guard publisher.stats.reconnects >= 1, publisher.state == .connected else { return false }
            if tag.kind == .video && tag.isKeyframe { keyframesSinceReconnect += 1 }
            return keyframesSinceReconnect == 2
        }
        #expect(keyframesSinceReconnect == 2, "the publisher did not reconnect within the programme")
        #expect(StateRecorder.wait(timeout: 5) { publisher.state == .connected && publisher.stats.queuedTags == 0 })
        publisher.stop()

        let states = recorder.states
        #expect(states.first == .connecting)
        #expect(states.contains(.reconnecting))
        #expect(states.filter { $0 == .connected }.count == 2)
        #expect(publisher.stats.reconnects >= 1)
        // The second connection reports its attempt number, and each connection asked for a keyframe.
        #expect(recorder.changes.filter { $0.state == .connected }.map(\.attempt).first == 0)
        #expect((recorder.changes.filter { $0.state == .connected }.last?.attempt ?? 0) >= 1)
        #expect(keyframes.count == 2)
        let path = nginx.recordingPath(stream: "again")
        let streams = try recordedStreams(path)
        #expect(streams.map(\.codec).sorted() == ["aac", "h264"], "nginx log: \(nginx.errorLog)")
        let picture = try decodeFirstVideoFrameRGB(path: path, width: 32, height: 24, seekSeconds: nil)
        #expect(RGB.isClose(picture, to: (40, 40, 200)), "mean colour \(RGB.mean(picture))")
    }

    @Test("messages go out in 4096-byte chunks, and nginx records pictures many chunks long byte for byte")
    func largeChunks() throws {
        let nginx = try NginxRTMP(record: true)
        defer { nginx.stop() }
        // Noise pictures at a high rate: keyframes of tens of kilobytes, each cut into many chunks.
        let h264 = try H264Encoder(
            config: H264EncoderConfig(
                width: 320, height: 240, fps: 24, bitrateKbps: 8000,
                keyintFrames: 1, profile: .baseline))
        var frame = VideoFrame(width: 320, height: 240)
        var seed: UInt32 = 1
        var sizes: [Int] = []
        var session: RTMPSession? = try RTMPSession.connect(
            url: nginx.url(stream: "chunks"), destinations: .loopback)
        #expect(session?.chunkSize == 4096)
        try session?.write(FLVMuxer.avcSequenceHeader(h264.decoderConfigurationRecord))
        for index in 0..<6 {
            for i in frame.y.indices {
                seed = seed &* 1_664_525 &+ 1_013_904_223
                frame.y[i] = UInt8(truncatingIfNeeded: seed >> 24)
            }
            guard let encoded = try h264.encode(frame, pts: Int64(index), forceKeyframe: true) else { continue }
            sizes.append(encoded.data.count)
            try session?.write(
                FLVMuxer.videoTag(
                    avcc: encoded.data, isKeyframe: true, timestampMs: UInt32(index * 1000 / 24),
                    compositionTimeMs: 0))
        }
        session = nil  // closes the connection: nginx finishes the recording
        #expect(sizes.count >= 4 && sizes.allSatisfy { $0 > 3 * 4096 }, "sizes \(sizes)")

        let path = nginx.recordingPath(stream: "chunks")
        var recorded: [Int] = []
        _ = StateRecorder.wait(timeout: 5) {
            let result = try? run(
                "ffprobe",
                [
                    "-v", "error", "-select_streams", "v", "-show_entries", "packet=size",
                    "-of", "csv=p=0", path,
                ], timeout: 10)
            recorded = String(decoding: result?.stdout ?? [], as: UTF8.self).split(separator: "\n").compactMap {
                Int($0)
            }
            return recorded.count == sizes.count
        }
        #expect(recorded == sizes, "nginx log: \(nginx.errorLog)")
    }

    @Test("an application the server does not have is a final error naming it, with no retries")
    func unknownApplication() throws {
        let nginx = try NginxRTMP()
        defer { nginx.stop() }
        let recorder = StateRecorder()
        let url = "rtmp://127.0.0.1:\(nginx.port)/nosuchapp/key"
        let publisher = StreamPublisher(
            id: "u", url: url, logger: logger, destinations: .loopback, onStateChange: recorder.handler)
        publisher.start(headers: [FLVMuxer.aacSequenceHeader([0x11, 0x90])])
        #expect(StateRecorder.wait(timeout: 5) { publisher.state == .error }, "nginx log: \(nginx.errorLog)")
        publisher.stop()
        #expect(
            recorder.changes == [
                OutputStateChange(state: .connecting),
                OutputStateChange(
                    state: .error,
                    message:
                        "127.0.0.1:\(nginx.port) refused the RTMP connect to application 'nosuchapp' (no such application on the server?); check the URL"
                ),
            ])
        #expect(publisher.stats.reconnects == 0 && publisher.stats.sentTags == 0)
        #expect(nginx.errorLog.contains("application not found"))
    }

    @Test("a publish refused after the application accepted the connect (name in use) is retried, not final")
    func nameInUseIsRetried() throws {
        let nginx = try NginxRTMP()
        defer { nginx.stop() }
        let header = FLVMuxer.aacSequenceHeader([0x11, 0x90])
        let first = StreamPublisher(
            id: "a", url: nginx.url(stream: "taken"), logger: logger, destinations: .loopback, onStateChange: { _ in })
        first.start(headers: [header])
        defer { first.stop() }
        #expect(StateRecorder.wait(timeout: 5) { first.state == .connected })
        let recorder = StateRecorder()
        let second = StreamPublisher(
            id: "b", url: nginx.url(stream: "taken"), logger: logger, destinations: .loopback,
            onStateChange: recorder.handler)
        second.start(headers: [header])
        #expect(StateRecorder.wait(timeout: 5) { second.state == .reconnecting }, "nginx log: \(nginx.errorLog)")
        second.stop()
        #expect(
            recorder.changes.first { $0.state == .reconnecting }
                == OutputStateChange(
                    state: .reconnecting, attempt: 1,
                    message:
                        "127.0.0.1:\(nginx.port) accepted application 'live' but refused to publish \(redactedURL(nginx.url(stream: "taken"))): NetStream.Publish.BadName (Already publishing)"
                ))
        #expect(!recorder.states.contains(.error))
        #expect(first.state == .connected)
    }
}

extension DestinationPolicy {
    /// nginx-rtmp on this machine: the only destination these tests connect to.
    static let loopback = try! DestinationPolicy(allowing: ["127.0.0.0/8"])
}
