import Codecs
import Clocks
import Foundation
import Media
import Testing
import TestSupport

@testable import MediaSources

/// A source's pictures prepared for receivers' slots, from real files written by ffmpeg: H.264 that a browser can
/// take goes as it is (its parameter sets before each keyframe), anything else is encoded once in constrained
/// baseline; both decode to the file's picture.
@Suite struct SourceForwardingTests {
    /// Units the feed releases until `count` have come (the first from a keyframe on), within 15 s, from the moment
    /// a slot shows the source. Taken by a thread of its own, as the room's tick takes them: a task of the busy
    /// test pool can be left waiting for seconds, and the feed drops what is not taken in time.
    static func units(_ feed: SourceFeed, count: Int) async -> [SourceFeed.ForwardedUnit] {
        await withCheckedContinuation { done in
            let thread = Thread {
                feed.setForwarded(true)
                var all: [SourceFeed.ForwardedUnit] = []
                var due: [SourceFeed.ForwardedUnit] = []
                let deadline = Date().addingTimeInterval(15)
                while all.count < count && Date() < deadline {
                    feed.takeDueUnits(nowMs: MonotonicClock.nowMs(), into: &due)
                    for unit in due where unit.keyframe || !all.isEmpty { all.append(unit) }
                    Thread.sleep(forTimeInterval: 0.01)
                }
                done.resume(returning: all)
            }
            thread.start()
        }
    }

    /// Decodes `units` with libavcodec (Annex B, the parameter sets where a unit carries them) and returns the
    /// last picture.
    static func decode(_ units: [SourceFeed.ForwardedUnit]) throws -> (frame: VideoFrame, decoded: Int) {
        let decoder = try H264Decoder()
        var frame = VideoFrame(width: 2, height: 2)
        var decoded = 0
        for unit in units {
            var annexB: [UInt8] = []
            if let sets = unit.parameterSets { annexB += [0, 0, 0, 1] + sets.sps + [0, 0, 0, 1] + sets.pps }
            var offset = 0
            while offset + 4 <= unit.avcc.count {
                let n = unit.avcc[offset..<(offset + 4)].reduce(0) { $0 << 8 | Int($1) }
                annexB += [0, 0, 0, 1] + unit.avcc[(offset + 4)..<(offset + 4 + n)]
                offset += 4 + n
            }
            if try decoder.decode(annexB, into: &frame) { decoded += 1 }
        }
        return (frame, decoded)
    }

    /// A blue clip of x264 with `options` (its profile, its B-frames), a keyframe every `gop` pictures.
    static func blueClip(_ size: String, seconds: Int, gop: Int, _ options: [String]) throws -> String {
        try SourceReaderTests.file(
            "mp4",
            ["-f", "lavfi", "-i", "color=c=blue:s=\(size):r=30:d=\(seconds)", "-c:v", "libx264"] + options
                + ["-g", "\(gop)", "-pix_fmt", "yuv420p"])
    }

    /// A looping reader of `path` and its feed, once the input opened.
    /// `forwarded`: a slot shows the source from the moment its feed exists (not only once `units` starts taking).
    static func reading(
        _ path: String, hidden: Bool = false, forwarded: Bool = false
    ) async throws -> (SourceReader, SourceFeed) {
        let recorder = SourceReaderTests.Recorder(hidden: hidden, forwarded: forwarded)
        let reader = recorder.reader(SourceReaderTests.input(path, loop: true, latencyMs: 200))
        reader.start()
        _ = await eventually(seconds: 10) { recorder.feed.withLock { $0 } != nil }
        guard let feed = recorder.feed.withLock({ $0 }) else {
            reader.stop()
            throw TestSupportError.failed("the reader never opened \(path)")
        }
        return (reader, feed)
    }

    static func isBlue(_ frame: VideoFrame) -> Bool {
        let y = Int(frame.y[frame.height / 2 * frame.strideY + frame.width / 2])
        let u = Int(frame.u[frame.chromaHeight / 2 * frame.strideUV + frame.strideUV / 2])
        // Blue in BT.601 limited range: Y 41, U 240.
        return abs(y - 41) <= 8 && abs(u - 240) <= 8
    }

    @Test func aBaselineH264FileGoesToSlotsAsItIsWithParameterSetsBeforeEachKeyframe() async throws {
        let path = try Self.blueClip("320x180", seconds: 2, gop: 15, ["-profile:v", "baseline"])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (reader, feed) = try await Self.reading(path)
        defer { reader.stop() }
        // x264's baseline: constraint_set0 and 1, the constrained baseline browsers offer.
        let format = try #require(feed.forwardFormat)
        #expect(format.profileIDC == 0x42 && format.constraints == 0xC0)
        let units = await Self.units(feed, count: 40)
        #expect(units.count >= 40)
        // The MP4 keeps its parameter sets in `avcC`: every keyframe goes with them.
        #expect(units.filter(\.keyframe).allSatisfy { $0.parameterSets != nil })
        #expect(units.filter { !$0.keyframe }.allSatisfy { $0.parameterSets == nil })
        #expect(units.filter(\.keyframe).count >= 2)
        let (frame, decoded) = try Self.decode(units)
        #expect(decoded == units.count)
        #expect(frame.width == 320 && frame.height == 180)
        #expect(Self.isBlue(frame))
        let stats = feed.statistics
        #expect(stats.framesForwarded >= 40 && stats.framesEncoded == 0 && stats.framesForwardDropped == 0)
        // Times run at the file's 30 frames/s, on across its loop.
        for (a, b) in zip(units, units.dropFirst()) {
            #expect(abs(b.time - a.time - 1.0 / 30) < 0.002, "\(a.time) → \(b.time)")
        }
    }

    @Test func h264WithBFramesIsEncodedOnceInConstrainedBaselineForSlots() async throws {
        let path = try Self.blueClip("320x180", seconds: 2, gop: 30, ["-profile:v", "high", "-bf", "2"])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (reader, feed) = try await Self.reading(path, hidden: true)
        defer { reader.stop() }
        let format = try #require(feed.forwardFormat)
        #expect(format.profileIDC == 0x42 && format.constraints == 0xC0, "\(format.profileLevelID)")
        let units = await Self.units(feed, count: 30)
        #expect(units.count >= 30)
        #expect(units.first?.parameterSets != nil)
        let (frame, decoded) = try Self.decode(units)
        #expect(decoded == units.count)
        #expect(frame.width == 320 && frame.height == 180)
        #expect(Self.isBlue(frame))
        let stats = feed.statistics
        #expect(stats.framesEncoded >= 30 && stats.framesForwarded == 0)
        // Decoded only to be encoded: no region shows it, so no picture waits for one.
        #expect(stats.picturesDecoded == 0)
    }

    @Test func aStreamWhoseProfileChangesOnTheWayIsEncodedFromThereOn() async throws {
        // Two MPEG-TS clips end to end: 4 s of baseline (what the slots are told; long enough for the slot to be
        // shown it on a busy machine), then 1 s of high without B-frames.
        let first = try SourceReaderTests.file(
            "ts",
            [
                "-f", "lavfi", "-i", "color=c=blue:s=320x180:r=30:d=4", "-c:v", "libx264", "-profile:v", "baseline",
                "-g", "15", "-pix_fmt", "yuv420p",
            ])
        let second = try SourceReaderTests.file(
            "ts",
            [
                "-f", "lavfi", "-i", "color=c=blue:s=320x180:r=30:d=1", "-c:v", "libx264", "-profile:v", "high",
                "-bf", "0", "-g", "15", "-pix_fmt", "yuv420p", "-output_ts_offset", "4",
            ])
        let joined = NSTemporaryDirectory() + "cohost-joined-\(UUID().uuidString).ts"
        defer { for path in [first, second, joined] { try? FileManager.default.removeItem(atPath: path) } }
        let both = try Data(contentsOf: URL(fileURLWithPath: first)) + Data(contentsOf: URL(fileURLWithPath: second))
        try both.write(to: URL(fileURLWithPath: joined))
        // Forwarded from the start: on a busy machine the reader could otherwise reach the high part (and turn to
        // encoding for good) before the slot takes anything.
        let (reader, feed) = try await Self.reading(joined, forwarded: true)
        defer { reader.stop() }
        #expect(feed.forwardFormat?.profileIDC == 0x42)
        // Five seconds of units: the rest of the baseline part, and past the switch.
        let units = await Self.units(feed, count: 150)
        let stats = feed.statistics
        #expect(stats.framesForwarded >= 15 && stats.framesEncoded >= 15, "\(stats)")
        // Every keyframe's parameter sets are baseline: the high part's own never reached the slots.
        let profiles = Set(units.compactMap { $0.parameterSets?.sps[1] })
        #expect(profiles == [0x42], "\(profiles)")
        #expect(try Self.decode(units).decoded == units.count)
    }

    @Test func nothingIsPreparedWhileNoSlotShowsTheSource() async throws {
        let path = try Self.blueClip("160x90", seconds: 1, gop: 15, ["-profile:v", "baseline"])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (reader, feed) = try await Self.reading(path)
        defer { reader.stop() }
        #expect(await eventually(seconds: 10) { feed.statistics.picturesDecoded >= 30 })
        let stats = feed.statistics
        #expect(stats.framesForwarded == 0 && stats.framesEncoded == 0)
    }
}

/// The feed's queue of access units for slots: bounded in count and in size, and it starts again at a keyframe.
@Suite struct ForwardedUnitQueueTests {
    static func queue(_ feed: SourceFeed, bytes: Int, keyframe: Bool, at time: Double) {
        [UInt8](repeating: 0x41, count: bytes).withUnsafeBytes {
            feed.queueUnit($0, keyframe: keyframe, parameterSets: nil, at: time, encoded: false)
        }
    }

    @Test func anOversizedUnitIsDroppedAndWhatFollowsWaitsForAKeyframe() {
        let feed = SourceFeed(hasAudio: false, hasVideo: true, latencyMs: 0, forwardFormat: .encoded(levelIDC: 0x1F))
        feed.start(at: 0, nowMs: 0)
        Self.queue(feed, bytes: 100, keyframe: true, at: 0.0)
        Self.queue(feed, bytes: SourceFeed.maxUnitBytes + 1, keyframe: false, at: 0.033)
        Self.queue(feed, bytes: 100, keyframe: false, at: 0.066)
        Self.queue(feed, bytes: 200, keyframe: true, at: 0.1)
        var due: [SourceFeed.ForwardedUnit] = []
        feed.takeDueUnits(nowMs: 10_000, into: &due)
        #expect(due.map(\.avcc.count) == [100, 200])
        #expect(due.map(\.time) == [0.0, 0.1])
        #expect(feed.statistics.framesForwardDropped == 2 && feed.statistics.framesForwarded == 2)
    }

    @Test func aFullQueueLosesItsOldestAndWaitsForAKeyframe() {
        let feed = SourceFeed(hasAudio: false, hasVideo: true, latencyMs: 0, forwardFormat: .encoded(levelIDC: 0x1F))
        feed.start(at: 0, nowMs: 0)
        for i in 0..<SourceFeed.maxQueuedUnits { Self.queue(feed, bytes: 10, keyframe: i == 0, at: Double(i) / 30) }
        Self.queue(feed, bytes: 10, keyframe: false, at: 4.0)
        Self.queue(feed, bytes: 20, keyframe: true, at: 4.1)
        var due: [SourceFeed.ForwardedUnit] = []
        feed.takeDueUnits(nowMs: 100_000, into: &due)
        #expect(due.count == SourceFeed.maxQueuedUnits)
        #expect(due.last?.avcc.count == 20 && due.last?.keyframe == true)
        #expect(feed.statistics.framesForwardDropped == 2)
    }
}

/// `H264Units` on hand-made NAL units: the framings containers use, rewritten to 4-byte lengths.
@Suite struct H264UnitsTests {
    static let sps: [UInt8] = [0x67, 0x42, 0xC0, 0x1E, 0xD9]
    static let pps: [UInt8] = [0x68, 0xCE, 0x3C, 0x80]

    @Test func anAVCCRecordGivesTheParameterSetsAndTheLengthSize() throws {
        // configurationVersion 1, profile, compatibility, level, lengthSizeMinusOne 1 (2-byte lengths).
        let record: [UInt8] =
            [1, 0x42, 0xC0, 0x1E, 0xFD, 0xE1, 0, 5] + Self.sps + [1, 0, 4] + Self.pps
        var units = try #require(record.withUnsafeBytes { H264Units(extradata: $0) })
        #expect(units.lengthSize == 2)
        #expect(units.sps == Self.sps && units.pps == Self.pps)
        #expect(units.format?.profileLevelID == "42c01e")
        let packet: [UInt8] = [0, 3, 0x65, 0x88, 0x84, 0, 2, 0x41, 0x9A]
        let (keyframe, carries) = packet.withUnsafeBytes { units.rewrite($0) }
        #expect(keyframe && !carries)
        #expect(units.avcc == [0, 0, 0, 3, 0x65, 0x88, 0x84, 0, 0, 0, 2, 0x41, 0x9A])
    }

    @Test func annexBPacketsLoseTheirStartCodesDelimitersAndTrailingZeros() throws {
        let extradata: [UInt8] = [0, 0, 0, 1] + Self.sps + [0, 0, 1] + Self.pps
        var units = try #require(extradata.withUnsafeBytes { H264Units(extradata: $0) })
        #expect(units.lengthSize == nil && units.sps == Self.sps && units.pps == Self.pps)
        let newSPS: [UInt8] = [0x67, 0x4D, 0x40, 0x1F, 0x11]
        let packet: [UInt8] =
            [0, 0, 0, 1, 0x09, 0xF0] + [0, 0, 0, 1] + newSPS + [0, 0, 1, 0x65, 0x88, 0x00, 0, 0, 0, 1, 0x41, 0x9A]
        let (keyframe, carries) = packet.withUnsafeBytes { units.rewrite($0) }
        #expect(keyframe && carries)
        #expect(units.avcc == [0, 0, 0, 5] + newSPS + [0, 0, 0, 2, 0x65, 0x88, 0, 0, 0, 2, 0x41, 0x9A])
        // The stream's own parameter sets replace those of the extradata.
        #expect(units.sps == newSPS)
        #expect(units.format?.profileLevelID == "4d001f")
    }

    @Test func aTruncatedLengthEndsThePacketAndABadRecordIsRefused() throws {
        let record: [UInt8] = [1, 0x42, 0xC0, 0x1E, 0xFF, 0xE1, 0, 5] + Self.sps + [1, 0, 4] + Self.pps
        var units = try #require(record.withUnsafeBytes { H264Units(extradata: $0) })
        let packet: [UInt8] = [0, 0, 0, 2, 0x41, 0x9A, 0, 0, 0, 9, 0x41]
        let (keyframe, _) = packet.withUnsafeBytes { units.rewrite($0) }
        #expect(!keyframe)
        #expect(units.avcc == [0, 0, 0, 2, 0x41, 0x9A])
        let cut = Array(record.prefix(10))
        #expect(cut.withUnsafeBytes { H264Units(extradata: $0) } == nil)
    }

    @Test func profileLevelIDsKeepConstraintsForBaselineOnly() {
        #expect(SourceVideoFormat(profileIDC: 0x42, constraints: 0xE0, levelIDC: 0x1F).profileLevelID == "42e01f")
        #expect(SourceVideoFormat(profileIDC: 0x64, constraints: 0x0C, levelIDC: 0x28).profileLevelID == "640028")
        #expect(SourceVideoFormat.encoded(levelIDC: 0x1F).fmtp.contains("profile-level-id=42c01f"))
        #expect(!SourceVideoFormat(profileIDC: 0x6E, constraints: 0, levelIDC: 0x28).forwardableAsIs)
    }
}
