import Foundation
import Testing
import Logging
import Media
import Codecs
import RTP
import Playout
import TestSupport
@testable import Rooms
import CohostAPI

/// What one participant's video may cost: the room's picture size, the decode budget, and the decode threads the
/// packet path hands frames to. Real VP8 and H.264 encoder output throughout.
@Suite struct VideoDecodeTests {
    static let ssrc: UInt32 = 7000

    func participant(
        codec: String = "VP8", payloadType: UInt8 = 96, limits: VideoLimits = VideoLimits(), pool: DecodePool? = nil
    ) throws -> Participant {
        let video = NegotiatedStream(
            kind: .video, ssrc: Self.ssrc, payloadType: payloadType, clockRate: 90_000, codec: codec, srtp: nil)
        return try Participant(
            userId: "u", sessionID: 1, audio: nil, video: video, videoLimits: limits, decodePool: pool, nowMs: 0,
            logger: Logger(label: "t"))
    }

    /// Sends VP8 frames as single RTP packets, numbering on from `sender`'s state.
    struct Sender {
        var seq: UInt16 = 100
        var timestamp: UInt32 = 9000

        mutating func vp8(_ frames: [EncodedVideo], to p: Participant, nowMs: Int64 = 0) {
            for frame in frames {
                let packet = RTPPacket(
                    marker: true, payloadType: 96, sequenceNumber: seq, timestamp: timestamp,
                    ssrc: VideoDecodeTests.ssrc,
                    payload: [0x10] + frame.data)
                p.receive(packet, bytes: frame.data.count + 13, nowMs: nowMs)
                seq &+= 1
                timestamp &+= 3000
            }
        }

        /// One access unit: each NAL unit a single-NAL-unit packet (RFC 6184 §5.6), the marker on the last.
        mutating func h264(_ nalUnits: [[UInt8]], to p: Participant, nowMs: Int64 = 0) {
            for (i, nal) in nalUnits.enumerated() {
                let packet = RTPPacket(
                    marker: i == nalUnits.count - 1, payloadType: 102, sequenceNumber: seq, timestamp: timestamp,
                    ssrc: VideoDecodeTests.ssrc, payload: nal)
                p.receive(packet, bytes: nal.count + 12, nowMs: nowMs)
                seq &+= 1
            }
            timestamp &+= 3000
        }
    }

    /// `count` frames of a VP8 encoder, the first a keyframe; each picture differs from the last.
    func vp8Frames(
        width: Int, height: Int, count: Int, noisy: Bool = false, bitrateKbps: Int = 300
    ) throws
        -> [EncodedVideo]
    {
        let encoder = try VP8Encoder(width: width, height: height, fps: 30, bitrateKbps: bitrateKbps)
        var rng = SplitMix64(seed: 7)
        var out: [EncodedVideo] = []
        for i in 0..<count {
            var frame = VideoFrame(width: width, height: height, color: YUVColor(y: UInt8(40 + 7 * i), u: 128, v: 128))
            if noisy { for j in frame.y.indices { frame.y[j] = UInt8(truncatingIfNeeded: rng.next()) } }
            out += try encoder.encode(frame, pts: Int64(i), forceKeyframe: i == 0)
        }
        return out
    }

    func video(_ p: Participant) throws -> StreamReport { try #require(p.reports().first { $0.kind == "video" }) }

    func keyframeRequested(_ p: Participant, nowMs: Int64) throws -> Bool {
        try p.feedback(nowMs: nowMs, serverSSRC: 1, reportDue: false).contains {
            if case .pli = $0 { return true } else { return false }
        }
    }

    // MARK: picture size

    @Test func aVP8SenderLargerThanTheRoomAllowsIsNotDecodedUntilAKeyframeThatFits() throws {
        let p = try participant(limits: VideoLimits(maxWidth: 320, maxHeight: 240))
        var sender = Sender()
        sender.vp8(try vp8Frames(width: 640, height: 360, count: 4), to: p)
        _ = p.drain(nowMs: 0)
        var report = try video(p)
        #expect(report.framesDecoded == 0 && report.framesTooLarge == 4 && report.decodeErrors == 0)
        // The sender lowers its resolution: its next keyframe fits, and decoding starts there.
        sender.vp8(try vp8Frames(width: 320, height: 180, count: 3), to: p)
        guard case .firstVideoFrame(320, 180)? = p.drain(nowMs: 0) else {
            Issue.record("no first picture of 320×180")
            return
        }
        report = try video(p)
        #expect(report.framesDecoded == 3 && report.framesTooLarge == 4)
    }

    @Test func aPortraitPictureFitsALandscapeBound() throws {
        let p = try participant(limits: VideoLimits(maxWidth: 320, maxHeight: 180))
        var sender = Sender()
        sender.vp8(try vp8Frames(width: 180, height: 320, count: 2), to: p)
        #expect(try video(p).framesDecoded == 2 && video(p).framesTooLarge == 0)
    }

    @Test func anH264SenderIsJudgedByItsSequenceParameterSetBeforeAnythingIsDecoded() throws {
        let encoder = try H264Encoder(
            config: H264EncoderConfig(
                width: 640, height: 360, fps: 30, bitrateKbps: 500, keyintFrames: 30, profile: .high))
        let (sps, pps) = try #require(H264Units.parameterSets(record: encoder.decoderConfigurationRecord))
        var units: [[[UInt8]]] = []
        for i in 0..<3 {
            let frame = VideoFrame(width: 640, height: 360, color: YUVColor(y: UInt8(60 + 20 * i), u: 100, v: 150))
            guard let out = try encoder.encode(frame, pts: Int64(i), forceKeyframe: i == 0) else { continue }
            units.append((out.isKeyframe ? [sps, pps] : []) + (try #require(H264Units.avcc(out.data))))
        }
        try #require(!units.isEmpty)
        let declared = KeyframeSize.h264(H264Units.annexB(units[0]))
        #expect(declared?.width == 640 && declared?.height == 360)  // 368 coded lines, cropped

        let refused = try participant(
            codec: "H264", payloadType: 102, limits: VideoLimits(maxWidth: 480, maxHeight: 270))
        var sender = Sender()
        for unit in units { sender.h264(unit, to: refused) }
        _ = refused.drain(nowMs: 0)
        #expect(try video(refused).framesDecoded == 0 && video(refused).framesTooLarge == units.count)
        #expect(try video(refused).decodeCpuMs == 0 && video(refused).decodeErrors == 0)

        let admitted = try participant(
            codec: "H264", payloadType: 102, limits: VideoLimits(maxWidth: 640, maxHeight: 360))
        sender = Sender()
        for unit in units { sender.h264(unit, to: admitted) }
        #expect(try video(admitted).framesDecoded == units.count && video(admitted).framesTooLarge == 0)
    }

    // MARK: the decode threads

    /// Holds a pool's only thread until released.
    final class Blocker: DecodeJob, @unchecked Sendable {
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        func decodeNext() -> Bool {
            entered.signal()
            release.wait()
            return false
        }
    }

    /// A one-thread pool whose thread is held by a `Blocker` until its `release` is signalled.
    func blockedPool() -> (DecodePool, Blocker) {
        let pool = DecodePool(threads: 1)
        let blocker = Blocker()
        pool.schedule(blocker)
        blocker.entered.wait()
        return (pool, blocker)
    }

    @Test func thePacketPathQueuesFramesForTheDecodeThreadsAndNeverWaitsForThem() throws {
        let (pool, blocker) = blockedPool()
        defer { pool.stop() }
        let p = try participant(pool: pool)
        var sender = Sender()
        sender.vp8(try vp8Frames(width: 160, height: 120, count: 4), to: p)  // returns with the thread still held
        #expect(try video(p).framesDecoded == 0)
        blocker.release.signal()
        pool.waitUntilIdle()
        #expect(try video(p).framesDecoded == 4)
        guard case .firstVideoFrame(160, 120)? = p.drain(nowMs: 0) else {
            Issue.record("the first picture was not announced at the next tick")
            return
        }
        #expect(p.drain(nowMs: 0) == nil)
    }

    @Test func aSenderSixteenFramesAheadOfTheDecoderLosesTheRestUntilAKeyframeAndOneIsRequested() throws {
        let (pool, blocker) = blockedPool()
        defer { pool.stop() }
        let p = try participant(pool: pool)
        var sender = Sender()
        sender.vp8(try vp8Frames(width: 160, height: 120, count: 20), to: p)
        // Sixteen wait (the keyframe and fifteen after it), the seventeenth is dropped, and so is everything after it.
        #expect(try video(p).framesQueueFull == 4)
        #expect(try keyframeRequested(p, nowMs: 600))
        blocker.release.signal()
        pool.waitUntilIdle()
        #expect(try video(p).framesDecoded == 16)
        sender.vp8(try vp8Frames(width: 160, height: 120, count: 2), to: p)
        pool.waitUntilIdle()
        #expect(try video(p).framesDecoded == 18 && video(p).framesQueueFull == 4)
    }

    @Test func everyQueuedSenderGetsAFrameDecodedBeforeAnyGetsItsSecond() {
        final class Recorder: @unchecked Sendable {
            let lock = NSLock()
            var order: [String] = []
            func note(_ s: String) { lock.withLock { order.append(s) } }
        }
        final class Job: DecodeJob, @unchecked Sendable {
            let name: String
            let recorder: Recorder
            var left: Int
            init(_ name: String, frames: Int, _ recorder: Recorder) {
                self.name = name
                left = frames
                self.recorder = recorder
            }
            func decodeNext() -> Bool {
                left -= 1
                recorder.note(name)
                return left > 0
            }
        }
        let (pool, blocker) = blockedPool()
        defer { pool.stop() }
        let recorder = Recorder()
        pool.schedule(Job("big", frames: 4, recorder))
        pool.schedule(Job("a", frames: 1, recorder))
        pool.schedule(Job("b", frames: 2, recorder))
        blocker.release.signal()
        pool.waitUntilIdle()
        #expect(recorder.order == ["big", "a", "b", "big", "b", "big", "big"])
    }

    // MARK: the decode budget

    @Test func aSenderOverItsDecodeBudgetIsHeldToKeyframesAndAskedForOneWhenThePenaltyEnds() throws {
        // 1 ms a second: a 1080p keyframe of noise costs more than that on any machine.
        let p = try participant(limits: VideoLimits(decodeBudgetMs: 1))
        let frames = try vp8Frames(width: 1920, height: 1080, count: 4, noisy: true, bitrateKbps: 8000)
        var sender = Sender()
        sender.vp8(frames, to: p, nowMs: 0)
        var report = try video(p)
        #expect(
            report.framesDecoded == 1 && report.framesOverBudget == 3 && report.decodeBudgetExceeded == 1, "\(report)")
        // The next window: a keyframe is decoded, the interframes after it are not (held to keyframes for 10 s).
        let later = try vp8Frames(width: 1920, height: 1080, count: 2, noisy: true, bitrateKbps: 8000)
        sender.vp8(later, to: p, nowMs: 1_000)
        report = try video(p)
        #expect(report.framesDecoded == 2 && report.framesOverBudget == 4 && report.decodeBudgetExceeded == 2)
        // No keyframe is asked for while the penalty lasts; one is once it is over.
        #expect(try !keyframeRequested(p, nowMs: 5_000))
        #expect(try keyframeRequested(p, nowMs: 11_001))
    }
}
