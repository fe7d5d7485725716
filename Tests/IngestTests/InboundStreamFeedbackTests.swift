import Testing
import RTP
@testable import Ingest

/// The RTCP decisions of an inbound stream: keyframe requests, NACKs and reception reports, driven
/// the way the participant drives them (packets, a drain timer, a feedback timer), with VP8 payloads.
@Suite struct InboundStreamFeedbackTests {
    typealias V = InboundStreamTests

    /// As the participant builds its video streams: adaptive depth, NACK on, default pacing.
    static func nackingVideo() -> InboundStream {
        InboundStream(
            ssrc: 1002, payloadType: 96, clockRate: 90000, depacketizer: VP8Depacketizer(), maxDelayMs: 80,
            adaptive: true, nack: true)
    }

    /// A keyframe (seq 1, at 0 ms), then an inter frame of packets 2, 3, 4 whose middle packet is
    /// missing (2 and 4 arrive at 33 ms). Timestamps follow arrival exactly (90 units/ms): no jitter.
    static func interFrameMissingPacket3(_ s: InboundStream) {
        #expect(s.receive(V.vp8(1, ts: 0, V.keyStart, marker: true), bytes: 0, nowMs: 0).count == 1)
        #expect(s.receive(V.vp8(2, ts: 2970, V.interStart), bytes: 0, nowMs: 33).isEmpty)
        #expect(s.receive(V.vp8(4, ts: 2970, V.continuation, marker: true), bytes: 0, nowMs: 33).isEmpty)
    }

    static let packet3Payload: [UInt8] = [0x00, 0x01, 0x02]
    static let interFrame = EncodedFrame(
        data: [0xD1, 0x06, 0x00, 0x01, 0x02, 0xAB, 0xCD], rtpTimestamp: 2970,
        isKeyframe: false)

    // MARK: Keyframe requests

    @Test func keyframeIsRequestedOnJoinAndAgainEvery500MsUntilOneArrives() {
        let s = V.video()
        #expect(s.requestKeyframeIfNeeded(nowMs: 0))
        #expect(s.keyframeRequester.lastReason == .join)
        #expect(!s.requestKeyframeIfNeeded(nowMs: 499))
        #expect(s.requestKeyframeIfNeeded(nowMs: 500))
        #expect(s.receive(V.vp8(1, ts: 0, V.keyStart, marker: true), bytes: 0, nowMs: 600).count == 1)
        #expect(!s.requestKeyframeIfNeeded(nowMs: 1000))
        #expect(!s.requestKeyframeIfNeeded(nowMs: 5000))
        #expect(s.stats.plisRequested == 2)
        #expect(s.keyframeRequester.suppressed == 1)
    }

    @Test func unrecoverableLossRequestsAKeyframeThrottledTogetherWithDecodeErrors() {
        let s = V.video()  // fixed 80 ms depth, no NACK
        Self.interFrameMissingPacket3(s)
        #expect(!s.requestKeyframeIfNeeded(nowMs: 50))  // the keyframe arrived before any request
        // The decoder choked on something: the owner asks through the same requester.
        #expect(s.keyframeRequester.request(reason: .decodeError, nowMs: 100) == true)
        #expect(s.drain(nowMs: 112).isEmpty)
        #expect(!s.needsKeyframe)
        #expect(s.drain(nowMs: 113).isEmpty)  // 33 + 80: packet 3 given up, the inter frame dropped
        #expect(s.needsKeyframe)
        #expect(s.stats.lost == 1)
        #expect(s.stats.framesDropped == 1)
        #expect(!s.requestKeyframeIfNeeded(nowMs: 113))  // 13 ms after the decode-error request
        #expect(!s.requestKeyframeIfNeeded(nowMs: 599))
        #expect(s.requestKeyframeIfNeeded(nowMs: 600))
        #expect(s.keyframeRequester.lastReason == .unrecoverableLoss)
        #expect(s.stats.plisRequested == 2)
        #expect(s.receive(V.vp8(5, ts: 9000, V.keyStart, marker: true), bytes: 0, nowMs: 700).count == 1)
        #expect(!s.needsKeyframe)
        #expect(!s.requestKeyframeIfNeeded(nowMs: 1200))
    }

    // MARK: NACK

    @Test func adaptiveDepthLeavesRoomForANackRoundTrip() {
        let s = Self.nackingVideo()
        #expect(s.currentDelayMs == 70)  // no jitter yet: 10 ms NACK delay + 50 ms RTT + 10 ms margin
        s.setRoundTripTime(ms: 100)
        #expect(s.currentDelayMs == 120)
        s.setRoundTripTime(ms: 1000)
        #expect(s.currentDelayMs == 200)  // AdaptiveDelay.video's max
        s.setRoundTripTime(ms: Int64.max)  // from a hostile report: saturates, does not trap
        #expect(s.currentDelayMs == 200)
        let plain = V.video()
        plain.setRoundTripTime(ms: 500)
        #expect(plain.currentDelayMs == 80)
        #expect(plain.nacks(nowMs: 0) == [])
        #expect(plain.nackStats == nil)
    }

    @Test func retransmissionAnsweringTheNackFillsTheHoleAndReleasesTheFrame() {
        let s = Self.nackingVideo()
        Self.interFrameMissingPacket3(s)
        #expect(s.nextDeadlineMs == 103)  // 33 + 70
        #expect(s.nacks(nowMs: 42) == [])
        #expect(s.nacks(nowMs: 43) == [3])
        #expect(s.drain(nowMs: 92).isEmpty)  // still waiting for it
        #expect(s.nacks(nowMs: 92) == [])  // no repeat within one RTT of the first
        // The answer, 49 ms after the NACK.
        let frames = s.receive(V.vp8(3, ts: 2970, Self.packet3Payload), bytes: 0, nowMs: 92)
        #expect(frames == [Self.interFrame])
        #expect(s.nackStats?.recovered == 1)
        #expect(s.nackStats?.requested == 1)
        let stats = s.stats
        #expect(stats.nacksSent == 1)
        #expect(stats.lost == 0)
        #expect(stats.late == 0)
        #expect(stats.reordered == 1)
        #expect(stats.framesDropped == 0)
        #expect(!s.needsKeyframe)
        #expect(s.nextDeadlineMs == nil)
        // Recognised as an answer: timed (49 ms), and its lateness is not jitter.
        #expect(stats.retransmissions == 1)
        #expect(stats.roundTripMs == 49)
        #expect(stats.jitter == 0)
        #expect(s.currentDelayMs == 69)  // 10 ms NACK delay + 49 ms measured round trip + 10 ms margin
    }

    @Test func aLatePacketThatWasNeverNackedStillCountsAsJitter() {
        let s = Self.nackingVideo()
        Self.interFrameMissingPacket3(s)
        _ = s.receive(V.vp8(3, ts: 2970, Self.packet3Payload), bytes: 0, nowMs: 40)  // before the first NACK (43 ms)
        #expect(s.stats.retransmissions == 0)
        #expect(s.stats.roundTripMs == nil)
        #expect(s.stats.jitter == 39.375)  // |7 ms × 90| / 16: RFC 3550 A.8's first step
    }

    @Test func retransmissionAfterTheGapWasGivenUpIsLateAndDropped() {
        let s = Self.nackingVideo()
        Self.interFrameMissingPacket3(s)
        #expect(s.nacks(nowMs: 43) == [3])
        #expect(s.drain(nowMs: 102).isEmpty)
        #expect(s.drain(nowMs: 103).isEmpty)  // given up: the inter frame cannot be completed
        #expect(s.stats.lost == 1)
        #expect(s.needsKeyframe)
        #expect(s.nacks(nowMs: 103) == [])
        #expect(s.nackStats?.expired == 1)
        #expect(s.receive(V.vp8(3, ts: 2970, Self.packet3Payload), bytes: 0, nowMs: 110).isEmpty)
        #expect(s.stats.late == 1)
        #expect(s.nackStats?.recovered == 0)
        #expect(s.requestKeyframeIfNeeded(nowMs: 110))
        #expect(s.keyframeRequester.lastReason == .unrecoverableLoss)
    }

    @Test func noNackWhenTheAnswerCannotArriveBeforeAFixedDepthGivesUp() {
        let s = InboundStream(
            ssrc: 1002, payloadType: 96, clockRate: 90000, depacketizer: VP8Depacketizer(),
            maxDelayMs: 40, nack: true)
        #expect(s.currentDelayMs == 40)  // a fixed depth is not widened
        Self.interFrameMissingPacket3(s)
        // Sent at 43 at the earliest, answered around 93: after the give-up at 73.
        for ms in Int64(33)...72 { #expect(s.nacks(nowMs: ms) == []) }
        #expect(s.nackStats?.requested == 0)

        let fast = InboundStream(
            ssrc: 1002, payloadType: 96, clockRate: 90000, depacketizer: VP8Depacketizer(),
            maxDelayMs: 40, nack: true)
        fast.setRoundTripTime(ms: 20)
        Self.interFrameMissingPacket3(fast)
        #expect(fast.nacks(nowMs: 43) == [3])  // answered around 63 < 73
        #expect(fast.nacks(nowMs: 63) == [])  // a repeat would be answered around 83
        #expect(fast.nackStats?.requested == 1)
    }

    @Test func senderRestartStartsNackTrackingAndReceptionCountsOver() {
        let s = Self.nackingVideo()
        _ = s.receive(V.vp8(100, ts: 0, V.keyStart, marker: true), bytes: 0, nowMs: 0)
        _ = s.receive(V.vp8(102, ts: 5940, V.interStart, marker: true), bytes: 0, nowMs: 66)  // 101 missing
        #expect(s.nackStats?.resets == 0)
        _ = s.receive(V.vp8(50000, ts: 1_000_000, V.keyStart, marker: true), bytes: 0, nowMs: 100)
        _ = s.receive(V.vp8(50001, ts: 1_003_000, V.interStart, marker: true), bytes: 0, nowMs: 133)
        #expect(s.stats.resyncs == 1)
        #expect(s.nacks(nowMs: 200) == [])
        let r = s.receptionReport(nowMs: 200)
        #expect(r.extendedHighestSequence == 50001)
        #expect(r.totalLost == 0)
        #expect(r.fractionLost == 0)
    }

    // MARK: Reception reports and sender reports

    @Test func receptionReportCarriesLossWrapJitterAndSenderReportTiming() {
        let s = InboundStream(
            ssrc: 1001, payloadType: 111, clockRate: 48000, depacketizer: OpusDepacketizer(),
            maxDelayMs: 40)
        // 20 ms Opus packets across the wrap; 65535 is lost; 1 arrives 10 ms late (480 units).
        _ = s.receive(rtp(65533, ts: 0), bytes: 0, nowMs: 0)
        _ = s.receive(rtp(65534, ts: 960), bytes: 0, nowMs: 20)
        _ = s.receive(rtp(0, ts: 2880), bytes: 0, nowMs: 60)
        _ = s.receive(rtp(1, ts: 3840), bytes: 0, nowMs: 90)
        s.noteSenderReport(ntp: 0xE6A1_B2C3_D4E5_F607, rtpTimestamp: 3840, nowMs: 100)
        let r = s.receptionReport(nowMs: 350)
        #expect(
            r
                == ReceptionReport(
                    ssrc: 1001, fractionLost: 51, totalLost: 1, extendedHighestSequence: 0x0001_0001,
                    jitter: 30, lastSenderReport: 0xB2C3_D4E5,
                    delaySinceLastSenderReport: 16384))  // 250 ms = 1/4 s
        #expect(s.senderClock.reference?.ntp == 0xE6A1_B2C3_D4E5_F607)
        #expect(s.senderClock.ntpTimestamp(rtpTimestamp: 3840 + 48000) == 0xE6A1_B2C4_D4E5_F607)
        // Next interval: nothing lost.
        _ = s.receive(rtp(2, ts: 4800), bytes: 0, nowMs: 100)
        let next = s.receptionReport(nowMs: 400)
        #expect(next.fractionLost == 0)
        #expect(next.totalLost == 1)
        #expect(next.extendedHighestSequence == 0x0001_0002)
    }
}
