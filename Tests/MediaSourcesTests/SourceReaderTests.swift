import Foundation
import Media
import Synchronization
import Testing
import TestSupport

@testable import MediaSources

/// The source reader on real files written by ffmpeg: codecs decoded and resampled, pictures converted and
/// scaled, a loop played without a gap, and the states a file and a dead server go through.
@Suite struct SourceReaderTests {
    /// A file made by ffmpeg from lavfi `inputs` and codec `arguments`.
    static func file(_ ext: String, _ arguments: [String]) throws -> String {
        let path = NSTemporaryDirectory() + "cohost-reader-\(UUID().uuidString).\(ext)"
        let result = try run(
            "ffmpeg", ["-hide_banner", "-loglevel", "error", "-nostdin", "-y"] + arguments + [path], timeout: 60)
        guard result.status == 0 else { throw TestSupportError.failed("ffmpeg: \(result.stderr)") }
        return path
    }

    /// The states a reader reports, and the feed it fills.
    final class Recorder: @unchecked Sendable {
        let states = Mutex<[(SourceState, Int, String?)]>([])
        let feed = Mutex<SourceFeed?>(nil)
        /// The feed starts as no region showing it.
        let hidden: Bool
        /// The feed starts as a slot showing it, from the reader's own thread as it opens (a test's polling task may
        /// run seconds late on a busy machine).
        let forwarded: Bool
        var stateNames: [SourceState] { states.withLock { $0.map(\.0) } }

        init(hidden: Bool = false, forwarded: Bool = false) {
            self.hidden = hidden
            self.forwarded = forwarded
        }

        func reader(_ input: SourceInput) -> SourceReader {
            SourceReader(
                input,
                onState: { state, attempt, error in self.states.withLock { $0.append((state, attempt, error)) } },
                onOpen: { audio, video, forward in
                    let made = SourceFeed(
                        hasAudio: audio, hasVideo: video, latencyMs: input.latencyMs, forwardFormat: forward)
                    if self.hidden { made.setShown(false) }
                    if self.forwarded { made.setForwarded(true) }
                    self.feed.withLock { $0 = made }
                    return made
                })
        }
    }

    static func input(
        _ path: String, loop: Bool = false, latencyMs: Int = 400, maxWidth: Int = 1920, maxHeight: Int = 1080
    ) -> SourceInput {
        SourceInput(
            location: path, isFile: true, loop: loop, latencyMs: latencyMs, options: [:], wantsVideo: true,
            maxWidth: maxWidth, maxHeight: maxHeight)
    }

    @Test func aLoopingSoundFilePlaysInRealTimeWithoutAGapAcrossItsSeams() async throws {
        // 0.3 s of a 16 kHz mono tone: resampled to 48 kHz stereo, looped every 0.3 s.
        let path = try Self.file("wav", ["-f", "lavfi", "-i", "sine=f=1000:d=0.3:sample_rate=16000"])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let recorder = Recorder()
        // A second of buffer: the suite's other tests keep both cores busy, and this one is about the seams, not about
        // how long a starved reader thread may wait.
        let reader = recorder.reader(Self.input(path, loop: true, latencyMs: 1000))
        reader.start()
        defer { reader.stop() }
        #expect(await eventually(seconds: 5) { recorder.stateNames.contains(.live) })
        let feed = try #require(recorder.feed.withLock { $0 })
        #expect(feed.hasAudio && !feed.hasVideo)
        // Pulled as the mixer does, every 20 ms, for 1.2 s (four seams): after the prebuffer, never a block missing.
        var block = [Float](repeating: 0, count: AudioFormat.blockFrames * 2)
        var results: [Bool] = []
        var left: [Float] = []
        let start = ContinuousClock.now
        for tick in 1...60 {
            try await Task.sleep(until: start + .milliseconds(20 * tick), clock: .continuous)
            let ok = feed.pull(into: &block, nowMs: Int64(tick * 20), catchingUp: false)
            results.append(ok)
            if ok { left += stride(from: 0, to: block.count, by: 2).map { block[$0] } }
        }
        let first = try #require(results.firstIndex(of: true))
        #expect(first <= 10, "the prebuffer took \(first) ticks")
        #expect(!results[first...].contains(false), "a block was missing after the start: \(results)")
        // The file holds 300 whole periods of lavfi's sine (amplitude 1/8), so looped it is one unbroken sine: no
        // step between neighbouring samples is larger than the sine's own (2π·1000/48000/8 ≈ 0.016). A gap or a
        // repeated stretch at a seam would be a jump of up to 0.25.
        let steps = zip(left.dropFirst(960), left.dropFirst(961)).map { abs($1 - $0) }
        #expect(left.count >= 40 * 960)
        #expect((steps.max() ?? 1) < 0.02, "a jump of \(steps.max() ?? 1) in the looped sound")
        #expect(feed.statistics.underruns == 0)
        #expect(recorder.stateNames == [.connecting, .live])
    }

    @Test func aFilePlayedOnceEndsAndAMissingOneFailsWithoutRetrying() async throws {
        let path = try Self.file(
            "mp3", ["-f", "lavfi", "-i", "sine=f=700:d=0.2:sample_rate=44100", "-c:a", "libmp3lame"])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let once = Recorder()
        let reader = once.reader(Self.input(path))
        reader.start()
        #expect(await eventually(seconds: 5) { once.stateNames.last == .ended })
        #expect(once.stateNames == [.connecting, .live, .ended])
        #expect((once.feed.withLock { $0 }?.statistics.audioFrames ?? 0) >= 6)

        let missing = Recorder()
        let noFile = missing.reader(Self.input(NSTemporaryDirectory() + "cohost-no-such-\(UUID().uuidString).wav"))
        noFile.start()
        #expect(await eventually(seconds: 5) { missing.stateNames.last == .failed })
        #expect(missing.stateNames == [.connecting, .failed])
        let error = missing.states.withLock { $0.last?.2 ?? "" }
        #expect(error.contains("No such file"), "\(error)")
        #expect(missing.feed.withLock { $0 } == nil)
    }

    @Test func aServerThatRefusesIsRetriedWithBackoffUntilStopped() async throws {
        let port = try FreePort.tcp()
        let recorder = Recorder()
        let reader = recorder.reader(
            SourceInput(
                location: "rtmp://127.0.0.1:\(port)/live/none", isFile: false, loop: false, latencyMs: 500,
                options: [:], wantsVideo: true, maxWidth: 1920, maxHeight: 1080))
        reader.start()
        #expect(await eventually(seconds: 5) { recorder.states.withLock { $0.contains { $0.1 == 2 } } })
        reader.stop()
        let retries = recorder.states.withLock { $0 }.filter { $0.0 == .retrying }
        #expect(retries.map(\.1).prefix(2) == [1, 2])
        #expect(retries.first?.2?.contains("cannot open the input") == true)
        #expect(!recorder.stateNames.contains(.failed))
        // Stopped: nothing more is reported.
        let count = recorder.states.withLock { $0.count }
        try await Task.sleep(for: .milliseconds(600))
        #expect(recorder.states.withLock { $0.count } == count)
    }

    @Test(arguments: [
        ("mjpeg", "avi", ["-c:v", "mjpeg", "-pix_fmt", "yuvj422p"]),
        ("hevc", "mkv", ["-c:v", "libx265", "-x265-params", "log-level=none", "-pix_fmt", "yuv420p"]),
        ("h264", "mp4", ["-c:v", "libx264", "-pix_fmt", "yuv444p"]),
    ])
    func picturesOfAnyCodecAndPixelFormatArriveAsI420OfTheirColour(
        codec: String, ext: String, arguments: [String]
    )
        async throws
    {
        let path = try Self.file(ext, ["-f", "lavfi", "-i", "color=c=blue:s=160x90:r=25:d=1"] + arguments)
        defer { try? FileManager.default.removeItem(atPath: path) }
        // avi is not a container the media directory allows, but the reader itself reads whatever it is given.
        let recorder = Recorder()
        let reader = recorder.reader(Self.input(path))
        reader.start()
        defer { reader.stop() }
        #expect(await eventually(seconds: 5) { recorder.stateNames.last == .ended }, "\(recorder.stateNames)")
        let feed = try #require(recorder.feed.withLock { $0 })
        #expect(feed.statistics.picturesDecoded == 25)
        let picture = try #require(feed.picture(nowMs: Int64.max / 4, holdMs: Int64.max / 4))
        #expect(picture.width == 160 && picture.height == 90)
        picture.withPlanes { planes in
            // Blue in BT.601 limited range: Y 41, U 240, V 110.
            #expect(abs(Int(planes.y[45 * planes.strideY + 80]) - 41) <= 6)
            #expect(abs(Int(planes.u[22 * planes.strideU + 40]) - 240) <= 6)
            #expect(abs(Int(planes.v[22 * planes.strideV + 40]) - 110) <= 6)
        }
    }

    @Test func aVideoOnlyFileNoRegionShowsIsStillReadAtItsOwnPace() async throws {
        // A second of 30 fps pictures, looped, and nothing to pace it but its own timestamps.
        let path = try Self.file(
            "mp4",
            [
                "-f", "lavfi", "-i", "color=c=green:s=160x90:r=30:d=1", "-c:v", "libx264", "-g", "10", "-pix_fmt",
                "yuv420p",
            ])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let recorder = Recorder(hidden: true)
        let started = Date()
        let reader = recorder.reader(Self.input(path, loop: true, latencyMs: 200))
        reader.start()
        defer { reader.stop() }
        #expect(
            await eventually(seconds: 10) { (recorder.feed.withLock { $0 }?.statistics.picturesSkipped ?? 0) >= 30 })
        // 30 pictures are a second of the file: read no sooner than that second less the 200 ms read-ahead.
        let elapsed = Date().timeIntervalSince(started)
        #expect(elapsed >= 0.7, "30 pictures skipped after \(elapsed) s")
    }

    @Test func picturesNoRegionShowsAreNotDecodedAndDecodingResumesAtAKeyframe() async throws {
        // 2 s of 25 fps H.264 with a keyframe every 10 frames, and a tone, looped.
        let path = try Self.file(
            "mp4",
            [
                "-f", "lavfi", "-i", "color=c=green:s=160x90:r=25:d=2", "-f", "lavfi", "-i",
                "sine=f=440:d=2:sample_rate=48000", "-c:v", "libx264", "-g", "10", "-pix_fmt", "yuv420p",
                "-c:a", "aac", "-shortest",
            ])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let recorder = Recorder(hidden: true)
        let reader = recorder.reader(Self.input(path, loop: true))
        reader.start()
        defer { reader.stop() }
        #expect(
            await eventually(seconds: 10) { (recorder.feed.withLock { $0 }?.statistics.picturesSkipped ?? 0) >= 15 })
        let feed = try #require(recorder.feed.withLock { $0 })
        // Not shown: the sound goes on, the pictures are skipped, not decoded.
        #expect(feed.statistics.picturesDecoded == 0 && feed.statistics.audioFrames > 10)
        feed.setShown(true)
        #expect(await eventually(seconds: 10) { feed.statistics.picturesDecoded >= 10 })
        let picture = try #require(feed.picture(nowMs: Int64.max / 4, holdMs: Int64.max / 4))
        picture.withPlanes { planes in
            // lavfi's green (0, 128, 0), decoded whole from a keyframe on (a picture decoded from the middle of a group
            // would be grey).
            #expect(abs(Int(planes.y[45 * planes.strideY + 80]) - 81) <= 8)
        }
    }

    @Test func aPictureLargerThanTheRoomAllowsIsScaledDownToFit() async throws {
        let path = try Self.file(
            "mp4",
            ["-f", "lavfi", "-i", "color=c=white:s=1280x720:r=10:d=0.5", "-c:v", "libx264", "-pix_fmt", "yuv420p"])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let recorder = Recorder()
        let reader = recorder.reader(Self.input(path, maxWidth: 640, maxHeight: 640))
        reader.start()
        defer { reader.stop() }
        #expect(await eventually(seconds: 5) { recorder.stateNames.last == .ended })
        let picture = try #require(recorder.feed.withLock { $0 }?.picture(nowMs: Int64.max / 4, holdMs: Int64.max / 4))
        #expect(picture.width == 640 && picture.height == 360)
        let (w, h) = VideoStreamDecoder.fit(width: 1081, height: 1921, 1920, 1080)
        #expect(w <= 1920 && h <= 1080 && w % 2 == 0 && h % 2 == 0 && h >= 1076)
        let aspect = Double(w) / Double(h)
        #expect(abs(aspect - 1081.0 / 1921.0) < 0.01)
        let small = VideoStreamDecoder.fit(width: 320, height: 240, 1920, 1080)
        #expect(small.0 == 320 && small.1 == 240)
    }
}
