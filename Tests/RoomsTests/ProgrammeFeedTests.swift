import Codecs
import Foundation
import Logging
import Media
import Publishing
import Testing
@testable import Rooms
import CohostAPI

/// The tags of an FLV file as (type, timestamp, first body byte), header and trailers checked on the way.
func flvTags(_ bytes: [UInt8]) -> [(type: UInt8, ms: UInt32, first: UInt8)] {
    var tags: [(type: UInt8, ms: UInt32, first: UInt8)] = []
    var i = 13
    while i + 11 <= bytes.count {
        let size = Int(bytes[i + 1]) << 16 | Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
        let ms =
            UInt32(bytes[i + 7]) << 24 | UInt32(bytes[i + 4]) << 16 | UInt32(bytes[i + 5]) << 8 | UInt32(bytes[i + 6])
        guard i + 11 + size + 4 <= bytes.count, size > 0 else { break }
        tags.append((bytes[i], ms, bytes[i + 11]))
        i += 11 + size + 4
    }
    return tags
}

@Suite struct ProgrammeFeedTests {
    static func config(_ name: String) throws -> RoomConfig {
        try JSONDecoder().decode(
            RoomConfigRequest.self,
            from: Data(
                #"{"name":"\#(name)","canvas":{"width":160,"height":120,"fps":30},"video":{"bitrate":300,"keyint":10}}"#
                    .utf8)
        ).resolve()
    }

    /// A file output taking each tag as it comes (no audio in some tests: a strict interleave would hold pictures
    /// up to 400 ms waiting for sound), connected before it returns.
    static func addFile(_ programme: ProgrammeFeed, _ path: String) throws -> OutputInfo {
        let info = try programme.addOutput(
            OutputSpec(url: "file://" + path, options: OutputOptions(interleave: .lowLatency)),
            nowMs: 0)
        let deadline = Date().addingTimeInterval(5)
        while programme.outputInfos.first(where: { $0.id == info.id })?.state != "connected" && Date() < deadline {
            usleep(10_000)
        }
        #expect(programme.outputInfos.first { $0.id == info.id }?.state == "connected")
        return info
    }

    static func temporaryFLV() -> String { NSTemporaryDirectory() + "cohost-programme-\(UUID().uuidString).flv" }

    @Test func anOutputAddedMidStreamGetsAFreshKeyframeAndSkippedCanvasesLeaveGaps() throws {
        let programme = try ProgrammeFeed(config: try Self.config("p1"), logger: Logger(label: "test.programme")) {
            _, _, _ in
        }
        var canvas = VideoFrame(width: 160, height: 120)
        canvas.fill(YUVColor(r: 40, g: 160, b: 40))
        let first = Self.temporaryFLV(), path = Self.temporaryFLV()
        defer { for p in [first, path] { try? FileManager.default.removeItem(atPath: p) } }
        // Ten canvases for a first output: one IDR at canvas 0, then P frames (keyint is 300 canvases).
        _ = try Self.addFile(programme, first)
        for index in Int64(0)..<10 { programme.encodeVideo(canvas, index: index) }
        #expect(programme.videoFramesEncoded == 10)

        let info = try Self.addFile(programme, path)
        #expect(
            info.id == "o2" && info.attempt == 0 && info.bitrate == 300 && info.queueLimitMs == 2000
                && info.maxRetries == nil)
        // Canvases 13, 16 and 19 were skipped (as dynamic frame rate does): their times stay empty.
        for index: Int64 in [10, 11, 12, 14, 15, 17, 18, 20] { programme.encodeVideo(canvas, index: index) }
        programme.stop()

        let tags = flvTags(try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))))
        let primingMs = UInt32(try AACEncoder(channels: 2, bitrate: 128_000).primingSamples * 1000 / 48_000)
        let video = tags.filter { $0.type == 9 }
        // Sequence header, then the frames from canvas 10 on; canvas 10 is an IDR because the new file asked for one.
        #expect(video.map(\.first) == [0x17, 0x17, 0x27, 0x27, 0x27, 0x27, 0x27, 0x27, 0x27])
        let canvases: [UInt32] = [10, 11, 12, 14, 15, 17, 18, 20]
        let expected: [UInt32] = canvases.map { $0 * 1000 / 30 + primingMs }
        #expect(Array(video.dropFirst().map(\.ms)) == expected)
        // metadata; AAC header, no audio encoded
        #expect(tags.first?.type == 18 && tags.filter { $0.type == 8 }.count == 1)
    }

    @Test func aCanvasIsStampedLaterByTheCanvasPhaseAndTheVideoLead() throws {
        let programme = try ProgrammeFeed(config: try Self.config("p3"), logger: Logger(label: "test.programme")) {
            _, _, _ in
        }
        var canvas = VideoFrame(width: 160, height: 120)
        canvas.fill(YUVColor(r: 40, g: 40, b: 160))
        let path = Self.temporaryFLV()
        defer { try? FileManager.default.removeItem(atPath: path) }
        _ = try Self.addFile(programme, path)
        // Canvas 3 composed 7 ms after its index time and stamped 10 ms ahead; canvas 4 after a 2 ms shift earlier.
        programme.encodeVideo(canvas, index: 3, leadMs: 10, phaseMs: 7)
        programme.encodeVideo(canvas, index: 4, leadMs: 10, phaseMs: 5)
        programme.stop()
        let primingMs = UInt32(try AACEncoder(channels: 2, bitrate: 128_000).primingSamples * 1000 / 48_000)
        let video = flvTags(try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))).filter { $0.type == 9 }
            .dropFirst()
        #expect(video.map(\.ms) == [100 + primingMs + 17, 133 + primingMs + 15])
    }

    @Test func withNoOutputNothingIsEncodedAndALaterOutputContinuesTheTimeline() throws {
        let programme = try ProgrammeFeed(config: try Self.config("p2"), logger: Logger(label: "test.programme")) {
            _, _, _ in
        }
        var canvas = VideoFrame(width: 160, height: 120)
        canvas.fill(YUVColor(r: 200, g: 40, b: 40))
        let tone: [Float] = (0..<AudioFormat.blockFrames * 2).map { i in Float(sin(Double(i / 2) * 0.05) * 0.3) }
        // One second with nobody listening: 50 audio blocks and 30 canvases, none encoded.
        for block in 0..<50 {
            programme.encodeAudio(tone, tick: Int64(block))
            if block % 5 < 3 { programme.encodeVideo(canvas, index: Int64(block / 5 * 3 + block % 5)) }
        }
        #expect(programme.videoFramesEncoded == 0 && programme.audioFramesEncoded == 0)

        let path = Self.temporaryFLV()
        defer { try? FileManager.default.removeItem(atPath: path) }
        _ = try Self.addFile(programme, path)
        // The next half second: blocks 50..74 (1000..1480 ms), canvases 30..44.
        for block in 50..<75 {
            programme.encodeAudio(tone, tick: Int64(block))
            if block % 5 < 3 { programme.encodeVideo(canvas, index: Int64(block / 5 * 3 + block % 5)) }
        }
        #expect(programme.videoFramesEncoded == 15)
        programme.stop()

        let tags = flvTags(try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))))
        let primingMs = UInt32(try AACEncoder(channels: 2, bitrate: 128_000).primingSamples * 1000 / 48_000)
        let video = tags.filter { $0.type == 9 }.dropFirst()
        #expect(video.first?.first == 0x17 && video.first?.ms == 1000 + primingMs)
        #expect(video.count == 15)
        // AAC from a fresh encoder started at 1000 ms: the first frame (the sample of 1000 ms) is stamped 1000 ms,
        // then every 1024 samples (21.33 ms), as if the encoder had run all along.
        let audio = tags.filter { $0.type == 8 }.dropFirst().map(\.ms)
        #expect(audio.first == 1000)
        let expectedAudio: [UInt32] = [1000, 1021, 1042, 1064]  // (48000 + 1024·k) samples in ms, rounded down
        #expect(Array(audio.prefix(4)) == expectedAudio)
    }
}
