import Foundation
import Logging
import Media
import Testing
import TestSupport
@testable import Publishing

/// The recordings quota: what the directory held at start counts, and a file output, FLV or muxed, stops with the
/// quota's reason before the directory passes it (a muxed one by at most one buffer of the muxer).
@Suite("recordings quota")
struct RecordingQuotaTests {
    let logger = Logger(label: "test.quota")

    func directory() throws -> String {
        let path = NSTemporaryDirectory() + "cohost-quota-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test("the files already in the directory count, and a take that would pass the limit takes nothing")
    func counting() throws {
        let dir = try directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Data(repeating: 1, count: 3_000).write(to: URL(fileURLWithPath: dir + "/old.flv"))
        try FileManager.default.createDirectory(atPath: dir + "/hls-x", withIntermediateDirectories: true)
        try Data(repeating: 1, count: 500).write(to: URL(fileURLWithPath: dir + "/hls-x/s0.m4s"))
        let quota = RecordingQuota(limitBytes: 10_000, directory: dir)
        #expect(quota.usedBytes == 3_500)
        #expect(quota.take(6_000) == nil)
        #expect(quota.take(501) == quota.take(10_000))
        #expect(quota.usedBytes == 9_500)
        #expect(quota.take(500) == nil && quota.usedBytes == 10_000)
    }

    @Test("a room's quota stops its own recordings and charges the directory's, which stops every room's")
    func perRoom() throws {
        let dir = try directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let total = RecordingQuota(limitBytes: 10_000, directory: dir)
        let show = RecordingQuota(room: "show", limitBytes: 4_000, parent: total)
        let talk = RecordingQuota(room: "talk", limitBytes: 8_000, parent: total)
        #expect(show.take(4_000) == nil && total.usedBytes == 4_000)
        #expect(
            show.take(1)
                == "room 'show' has written its quota of 4000 bytes of recordings (recordings_room_max_bytes)")
        #expect(total.usedBytes == 4_000)
        #expect(talk.take(6_000) == nil && total.usedBytes == 10_000)
        // The directory is full before "talk" reaches its own limit: the directory's reason, and nothing counted.
        #expect(
            talk.take(1)
                == "the recordings directory is full: its quota of 10000 bytes (recordings_max_bytes) is reached")
        #expect(talk.usedBytes == 6_000 && total.usedBytes == 10_000)
        // A room's quota without a directory's.
        let alone = RecordingQuota(room: "solo", limitBytes: 100, parent: nil)
        #expect(alone.take(100) == nil && alone.take(1) != nil)
    }

    func write(_ name: String, limit: Int64) throws -> (FileOutput, StateRecorder, String, RecordingQuota) {
        let dir = try directory()
        let quota = RecordingQuota(limitBytes: limit, directory: dir)
        let path = dir + "/" + name
        let recorder = StateRecorder()
        let output = FileOutput(
            id: "q", url: "file://" + path, options: OutputOptions(queueLimitMs: 5000), quota: quota,
            logger: logger, onStateChange: recorder.handler)
        let programme = try EncodedProgramme(segments: [(2, YUVColor(r: 200, g: 40, b: 40))], dataEveryMs: 200)
        output.start(headers: programme.headers)
        #expect(StateRecorder.wait(timeout: 2) { output.state == .connected || output.state == .error })
        for tag in programme.tags { output.send(tag) }
        #expect(StateRecorder.wait(timeout: 5) { output.state == .error })
        output.stop()
        return (output, recorder, path, quota)
    }

    @Test("an FLV output stops with the quota's reason, the file within the quota")
    func flv() throws {
        let (output, recorder, path, quota) = try write("show.flv", limit: 20_000)
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        #expect(output.state == .error)
        #expect(
            output.lastMessage
                == "the recordings directory is full: its quota of 20000 bytes (recordings_max_bytes) is reached")
        #expect(recorder.states == [.connecting, .connected, .error])
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
        #expect(size > 0 && size <= 20_000 && Int64(size) == quota.usedBytes)
    }

    @Test("an MP4 output stops with the quota's reason, past it by at most the muxer's buffer")
    func mp4() throws {
        let (output, _, path, _) = try write("show.mp4", limit: 20_000)
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        #expect(output.state == .error)
        #expect(output.lastMessage?.hasPrefix("the recordings directory is full") == true)
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
        #expect(size > 20_000 && size <= 20_000 + 64 * 1024, "\(size) bytes")
    }
}
