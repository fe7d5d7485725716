import Codecs
import Foundation
import Logging
import Media
import Publishing
import Testing
@testable import Rooms

/// The tags of an FLV file as (type, timestamp, first body byte), header and trailers checked on the way.
private func flvTags(_ bytes: [UInt8]) -> [(type: UInt8, ms: UInt32, first: UInt8)] {
    var tags: [(type: UInt8, ms: UInt32, first: UInt8)] = []
    var i = 13
    while i + 11 <= bytes.count {
        let size = Int(bytes[i + 1]) << 16 | Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
        let ms = UInt32(bytes[i + 7]) << 24 | UInt32(bytes[i + 4]) << 16 | UInt32(bytes[i + 5]) << 8 | UInt32(bytes[i + 6])
        guard i + 11 + size + 4 <= bytes.count, size > 0 else { break }
        tags.append((bytes[i], ms, bytes[i + 11]))
        i += 11 + size + 4
    }
    return tags
}

@Suite struct ProgrammeTests {
    @Test func anOutputAddedMidStreamGetsAFreshKeyframeAndSkippedCanvasesLeaveGaps() throws {
        let config = try JSONDecoder().decode(RoomConfigRequest.self, from: Data(
            #"{"name":"p1","canvas":{"width":160,"height":120,"fps":30},"video":{"bitrate":300,"keyint":10}}"#.utf8)).resolve()
        let programme = try Programme(config: config, logger: Logger(label: "test.programme")) { _, _, _ in }
        var canvas = VideoFrame(width: 160, height: 120)
        canvas.fill(YUVColor(r: 40, g: 160, b: 40))
        // Ten canvases with nobody listening: one IDR at canvas 0, then P frames (keyint is 300 canvases).
        for index in Int64(0)..<10 { programme.encodeVideo(canvas, index: index) }
        #expect(programme.videoFramesEncoded == 10)

        let path = NSTemporaryDirectory() + "cohost-programme-\(UUID().uuidString).flv"
        defer { try? FileManager.default.removeItem(atPath: path) }
        // No audio is encoded here, so a strict interleave would hold the pictures for up to 400 ms waiting for
        // sound (canvases from before the output existed included): this output takes each tag as it comes.
        let info = try programme.addOutput(OutputSpec(url: "file://" + path, options: OutputOptions(interleave: .lowLatency)),
                                           nowMs: 0)
        #expect(info.id == "o1" && info.attempt == 0 && info.bitrate == 300 && info.queueLimitMs == 2000 && info.maxRetries == nil)
        let deadline = Date().addingTimeInterval(5)
        while programme.outputInfos.first?.state != "connected" && Date() < deadline { usleep(10_000) }
        #expect(programme.outputInfos.first?.state == "connected")
        // Canvases 13, 16 and 19 were skipped (as dynamic frame rate does): their times stay empty.
        for index: Int64 in [10, 11, 12, 14, 15, 17, 18, 20] { programme.encodeVideo(canvas, index: index) }
        programme.stop()

        let tags = flvTags(try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))))
        let primingMs = UInt32(try AACEncoder(channels: 2, bitrate: 128_000).primingSamples * 1000 / 48_000)
        let video = tags.filter { $0.type == 9 }
        // Sequence header, then the frames from canvas 10 on; canvas 10 is an IDR because the file asked for one.
        #expect(video.map(\.first) == [0x17, 0x17, 0x27, 0x27, 0x27, 0x27, 0x27, 0x27, 0x27])
        let canvases: [UInt32] = [10, 11, 12, 14, 15, 17, 18, 20]
        let expected: [UInt32] = canvases.map { $0 * 1000 / 30 + primingMs }
        #expect(Array(video.dropFirst().map(\.ms)) == expected)
        #expect(tags.first?.type == 18 && tags.filter { $0.type == 8 }.count == 1)  // metadata; AAC header, no audio encoded
    }
}
