import Testing
import RTP
@testable import Ingest

@Suite struct InboundStreamTests {
    // VP8 payloads (descriptor + start of the frame): a 64x48 key frame header and an inter frame tag,
    // as libvpx writes them (RFC 6386 §9.1; RFC 7741 §4.3 P bit).
    static let keyStart: [UInt8] = [0x10, 0x50, 0x1A, 0x00, 0x9D, 0x01, 0x2A, 0x40, 0x00, 0x30, 0x00]
    static let interStart: [UInt8] = [0x10, 0xD1, 0x06, 0x00]
    static let continuation: [UInt8] = [0x00, 0xAB, 0xCD]

    static func video() -> InboundStream {
        InboundStream(ssrc: 1002, payloadType: 96, clockRate: 90000, depacketizer: VP8Depacketizer(), maxDelayMs: 80)
    }

    static func vp8(_ seq: UInt16, ts: UInt32, _ payload: [UInt8], marker: Bool = false) -> RTPPacket {
        rtp(seq, ts: ts, marker: marker, pt: 96, ssrc: 1002, payload: payload)
    }

    @Test func needsKeyframeUntilTheFirstAndDiscardsInterFramesBeforeIt() {
        let s = Self.video()
        #expect(s.needsKeyframe)
        #expect(s.receive(Self.vp8(1, ts: 0, Self.interStart, marker: true), bytes: 16, nowMs: 0).isEmpty)
        #expect(s.needsKeyframe)
        let frames = s.receive(Self.vp8(2, ts: 3000, Self.keyStart, marker: true), bytes: 23, nowMs: 33)
        #expect(frames == [EncodedFrame(data: Array(Self.keyStart.dropFirst()), rtpTimestamp: 3000, isKeyframe: true)])
        #expect(!s.needsKeyframe)
        #expect(s.receive(Self.vp8(3, ts: 6000, Self.interStart, marker: true), bytes: 16, nowMs: 66).count == 1)
        let stats = s.stats
        #expect(stats.packets == 3)
        #expect(stats.bytes == 55)
        #expect(stats.framesEmitted == 2)
        #expect(stats.keyframes == 1)
        #expect(stats.framesBeforeFirstKeyframe == 1)
        #expect(stats.lastPacketMs == 66)
    }

    @Test func reorderedFragmentsAreAssembledInSequenceOrder() {
        let s = Self.video()
        #expect(s.receive(Self.vp8(10, ts: 0, Self.keyStart), bytes: 0, nowMs: 0).isEmpty)
        #expect(s.receive(Self.vp8(12, ts: 0, [0x00, 0x03], marker: true), bytes: 0, nowMs: 1).isEmpty)
        let frames = s.receive(Self.vp8(11, ts: 0, [0x00, 0x02]), bytes: 0, nowMs: 2)
        #expect(frames.map(\.data) == [Array(Self.keyStart.dropFirst()) + [0x02, 0x03]])
        #expect(s.stats.reordered == 1)
    }

    @Test func lostMiddleFragmentDropsTheFrameAndAsksForAKeyframe() {
        let s = Self.video()
        _ = s.receive(Self.vp8(1, ts: 0, Self.keyStart, marker: true), bytes: 0, nowMs: 0)
        #expect(!s.needsKeyframe)
        _ = s.receive(Self.vp8(2, ts: 3000, Self.interStart), bytes: 0, nowMs: 33)
        // 3 never arrives.
        #expect(s.receive(Self.vp8(4, ts: 3000, Self.continuation, marker: true), bytes: 0, nowMs: 34).isEmpty)
        #expect(s.drain(nowMs: 113).isEmpty)
        #expect(s.drain(nowMs: 114).isEmpty)  // gap given up: the frame is dropped, not emitted
        #expect(s.needsKeyframe)
        #expect(s.stats.lost == 1)
        #expect(s.stats.framesDropped == 1)
        // Inter frames still flow to the decoder (it conceals); the keyframe request stays up.
        #expect(s.receive(Self.vp8(5, ts: 6000, Self.interStart, marker: true), bytes: 0, nowMs: 120).count == 1)
        #expect(s.needsKeyframe)
        #expect(s.receive(Self.vp8(6, ts: 9000, Self.keyStart, marker: true), bytes: 0, nowMs: 150).count == 1)
        #expect(!s.needsKeyframe)
        #expect(s.nextDeadlineMs == nil)
    }

    @Test func otherPayloadTypesAndSSRCsAreIgnoredAndCounted() {
        let s = Self.video()
        #expect(s.receive(rtp(1, pt: 97, ssrc: 1002), bytes: 100, nowMs: 5).isEmpty)
        #expect(s.receive(rtp(1, pt: 96, ssrc: 7), bytes: 100, nowMs: 6).isEmpty)
        let stats = s.stats
        #expect(stats.wrongPayloadType == 1)
        #expect(stats.wrongSSRC == 1)
        #expect(stats.packets == 0)
        #expect(stats.bytes == 0)
        #expect(stats.lastPacketMs == 6)
    }

    @Test func opusFramesFlowWithLossMarkedAndJitterMeasured() {
        let s = InboundStream(
            ssrc: 1001, payloadType: 111, clockRate: 48000, depacketizer: OpusDepacketizer(),
            maxDelayMs: 40)
        #expect(s.needsKeyframe)
        #expect(s.receive(rtp(1, ts: 0), bytes: 13, nowMs: 0).count == 1)
        #expect(!s.needsKeyframe)
        #expect(s.receive(rtp(2, ts: 960), bytes: 13, nowMs: 20).count == 1)
        #expect(s.stats.jitter == 0)
        // 3 is lost; 4 arrives 10 ms late: transit grows by 480 units, J = 480 / 16.
        #expect(s.receive(rtp(4, ts: 2880), bytes: 13, nowMs: 70).isEmpty)
        #expect(s.stats.jitter == 30)
        let frames = s.drain(nowMs: 110)
        #expect(frames == [EncodedFrame(data: [0xFC], rtpTimestamp: 2880, isKeyframe: true, precededByLoss: true)])
        #expect(s.stats.lost == 1)
        #expect(s.stats.framesEmitted == 3)
        #expect(!s.needsKeyframe)
    }
}
