import Testing
import Media
@testable import Rooms

@Suite struct VideoPresenterTests {
    /// Decodes a picture of `width` into a free slot, captured at `capture` seconds.
    func decode(_ p: inout VideoPresenter, width: Int, capture: Double?, nowMs: Int64) throws {
        let slot = p.freeSlot()
        try p.withSlot(slot) { frame in frame = VideoFrame(width: width, height: 2) }
        p.decoded(slot: slot, capture: capture, nowMs: nowMs)
    }

    @Test func aPictureWaitsUntilTheAudioOfItsInstantPlays() throws {
        var p = VideoPresenter()
        try decode(&p, width: 4, capture: 10.00, nowMs: 0)
        try decode(&p, width: 6, capture: 10.04, nowMs: 0)
        #expect(p.present(playout: 9.99, nowMs: 10) == nil)
        #expect(p.present(playout: 10.00, nowMs: 20)?.width == 4)
        #expect(p.present(playout: 10.03, nowMs: 30)?.width == 4)
        #expect(p.present(playout: 10.05, nowMs: 40)?.width == 6)
        #expect(p.waiting == 0)
    }

    @Test func withoutClocksOrAfterTheLongestWaitTheNewestPictureShows() throws {
        var p = VideoPresenter()
        try decode(&p, width: 4, capture: nil, nowMs: 0)
        #expect(p.present(playout: 5, nowMs: 0)?.width == 4)
        try decode(&p, width: 6, capture: 99, nowMs: 100)
        #expect(p.present(playout: 5, nowMs: 100 + VideoPresenter.maxWaitMs - 1)?.width == 4)
        #expect(p.present(playout: 5, nowMs: 100 + VideoPresenter.maxWaitMs)?.width == 6)
    }

    @Test func theShownSlotIsNeverHandedToTheDecoderAndTheOldestWaitingPictureMakesRoom() throws {
        var p = VideoPresenter()
        try decode(&p, width: 2, capture: 1, nowMs: 0)
        _ = p.present(playout: 1, nowMs: 0)
        for i in 0..<20 { try decode(&p, width: 4 + 2 * i, capture: 100 + Double(i), nowMs: 0) }
        #expect(p.waiting == VideoPresenter.slotCount - 2)
        #expect(p.present(playout: 1, nowMs: 1)?.width == 2)
        #expect(p.present(playout: 200, nowMs: 2)?.width == 4 + 2 * 19)
    }
}

@Suite struct LipSyncControllerTests {
    @Test func aVoiceAheadOfItsPictureIsHeldBackByTheSmallestLagOfASecond() {
        var c = LipSyncController()
        #expect(c.observe(lag: 0.080, nowMs: 0) == nil)
        #expect(c.observe(lag: 0.060, nowMs: 500) == nil)
        #expect(c.observe(lag: 0.070, nowMs: 1000) == 2880)  // 60 ms at 48 kHz
        #expect(c.observe(lag: 0.010, nowMs: 1500) == nil)
        #expect(c.observe(lag: 0.015, nowMs: 2000) == nil)    // within ±20 ms: left alone
    }

    @Test func pictureWaitingForTheVoiceGivesTheDelayBackButNeverBelowZeroOrAbove300ms() {
        var c = LipSyncController()
        _ = c.observe(lag: 1.0, nowMs: 0)
        #expect(c.observe(lag: 1.0, nowMs: 1000) == LipSyncController.maxDelayFrames)
        _ = c.observe(lag: -0.1, nowMs: 1001)
        #expect(c.observe(lag: -0.1, nowMs: 2001) == LipSyncController.maxDelayFrames - 4800)
        _ = c.observe(lag: -1, nowMs: 2002)
        #expect(c.observe(lag: -1, nowMs: 3002) == 0)
        _ = c.observe(lag: -1, nowMs: 3003)
        #expect(c.observe(lag: -1, nowMs: 4003) == nil)
    }
}
