import Testing
import Media
@testable import Playout

/// Stands in for a decoded picture: the presenter only hands slots out and back.
final class SlotPicture {
    var width = 0
}

@Suite struct VideoPresenterTests {
    typealias Presenter = VideoPresenter<SlotPicture>

    /// Decodes a picture of `width` into a free slot, captured at `capture` seconds.
    func decode(_ p: inout Presenter, width: Int, capture: Double?, nowMs: Int64) {
        let slot = p.freeSlot { SlotPicture() }
        p.slots[slot].width = width
        p.decoded(slot: slot, capture: capture, nowMs: nowMs)
    }

    @Test func aPictureWaitsUntilTheAudioOfItsInstantPlays() throws {
        var p = Presenter { SlotPicture() }
        decode(&p, width: 4, capture: 10.00, nowMs: 0)
        decode(&p, width: 6, capture: 10.04, nowMs: 0)
        #expect(p.present(playout: 9.99, nowMs: 10) == nil)
        #expect(p.present(playout: 10.00, nowMs: 20)?.width == 4)
        #expect(p.present(playout: 10.03, nowMs: 30)?.width == 4)
        #expect(p.present(playout: 10.05, nowMs: 40)?.width == 6)
        #expect(p.waiting == 0)
    }

    @Test func theCanvasThatFirstShowsAPictureIsToldWhenItWasDecodedAndCaptured() throws {
        // What CanvasPhase lines the canvases up with.
        var p = Presenter { SlotPicture() }
        decode(&p, width: 4, capture: 10.00, nowMs: 100)
        decode(&p, width: 6, capture: 10.03, nowMs: 130)
        #expect(p.present(playout: 9.99, nowMs: 131) == nil)
        #expect(p.newlyShown == nil)
        #expect(p.present(playout: 10.035, nowMs: 140)?.width == 6)  // both due: the newer is shown
        #expect(p.newlyShown?.decodedMs == 130 && p.newlyShown?.capture == 10.03)
        #expect(p.present(playout: 10.07, nowMs: 173)?.width == 6)
        #expect(p.newlyShown == nil)
    }

    @Test func withoutClocksOrAfterTheLongestWaitTheNewestPictureShows() throws {
        var p = Presenter { SlotPicture() }
        decode(&p, width: 4, capture: nil, nowMs: 0)
        #expect(p.present(playout: 5, nowMs: 0)?.width == 4)
        decode(&p, width: 6, capture: 99, nowMs: 100)
        #expect(p.present(playout: 5, nowMs: 100 + Presenter.maxWaitMs - 1)?.width == 4)
        #expect(p.present(playout: 5, nowMs: 100 + Presenter.maxWaitMs)?.width == 6)
    }

    @Test func theShownSlotIsNeverHandedToTheDecoderAndTheOldestWaitingPictureMakesRoom() throws {
        var p = Presenter { SlotPicture() }
        decode(&p, width: 2, capture: 1, nowMs: 0)
        _ = p.present(playout: 1, nowMs: 0)
        for i in 0..<20 { decode(&p, width: 4 + 2 * i, capture: 100 + Double(i), nowMs: 0) }
        #expect(p.waiting == Presenter.slotCount - 2)
        #expect(p.present(playout: 1, nowMs: 1)?.width == 2)
        #expect(p.present(playout: 200, nowMs: 2)?.width == 4 + 2 * 19)
    }

    @Test func aSlotReservedForADecodeInProgressIsNeitherHandedOutNorShownUntilDecoded() {
        var p = Presenter { SlotPicture() }
        decode(&p, width: 2, capture: nil, nowMs: 0)
        #expect(p.present(playout: nil, nowMs: 0)?.width == 2)
        let writing = p.reserveSlot { SlotPicture() }
        // Every other slot cycles through the decoder and the screen meanwhile; none is the one being written.
        for i in 0..<30 {
            let slot = p.freeSlot { SlotPicture() }
            #expect(slot != writing)
            p.slots[slot].width = 10 + i
            p.decoded(slot: slot, capture: nil, nowMs: 1)
            #expect(p.present(playout: nil, nowMs: 1)?.width == 10 + i)
        }
        p.slots[writing].width = 99
        p.decoded(slot: writing, capture: nil, nowMs: 2)
        #expect(p.present(playout: nil, nowMs: 2)?.width == 99)
        // A released reservation frees the slot again.
        let refused = p.reserveSlot { SlotPicture() }
        p.release(slot: refused)
        #expect(p.freeSlot { SlotPicture() } == refused)
        #expect(p.slotsReplaced == 0)
    }

    @Test func aPictureStillHeldByTheLastCanvasIsNotDecodedInto() {
        var p = Presenter { SlotPicture() }
        decode(&p, width: 2, capture: nil, nowMs: 0)
        let drawn = p.present(playout: nil, nowMs: 0)  // a tile of the last canvas keeps it
        decode(&p, width: 4, capture: nil, nowMs: 1)
        #expect(p.present(playout: nil, nowMs: 1)?.width == 4)  // on screen now; the tile still holds the first
        for i in 0..<40 {
            decode(&p, width: 6 + 2 * i, capture: nil, nowMs: 2)
            _ = p.present(playout: nil, nowMs: 2)
        }
        #expect(drawn?.width == 2)
        #expect(p.slotsReplaced == 0)
    }

    @Test func whenEveryFreeSlotIsHeldElsewhereANewPictureIsMadeAndTheHeldOnesStayAsTheyWere() {
        var p = Presenter { SlotPicture() }
        var held: [SlotPicture] = []
        for i in 0..<20 {
            decode(&p, width: 2 + 2 * i, capture: nil, nowMs: Int64(i))
            if let shown = p.present(playout: nil, nowMs: Int64(i)) { held.append(shown) }
        }
        #expect(held.map(\.width) == (0..<20).map { 2 + 2 * $0 })
        #expect(p.slotsReplaced == 20 - Presenter.slotCount)
    }
}

@Suite struct LipSyncControllerTests {
    @Test func aVoiceAheadOfItsPicturesIsHeldBackByTheMedianLagOfASecond() {
        var c = LipSyncController()
        for (lag, at) in [(0.080, 0), (0.200, 100), (0.060, 200), (0.030, 300)] as [(Double, Int64)] {
            #expect(c.observe(lag: lag, nowMs: at) == nil)
        }
        #expect(c.observe(lag: 0.070, nowMs: 1000) == 3360)  // 70 ms at 48 kHz, the middle of five
        #expect(c.observe(lag: 0.010, nowMs: 1500) == nil)
        #expect(c.observe(lag: -0.015, nowMs: 1600) == nil)
        #expect(c.observe(lag: 0.030, nowMs: 2000) == nil)  // median 10 ms, within ±20 ms: left alone
    }

    @Test func lagsSeenBeforeARestartDoNotCount() {
        var c = LipSyncController()
        for i in 0..<10 { _ = c.observe(lag: 0.100, nowMs: Int64(i) * 50) }
        c.restartWindow()
        #expect(c.observe(lag: 0.100, nowMs: 1000) == nil)  // a new window starts here
        #expect(c.observe(lag: 0.000, nowMs: 1500) == nil)
        #expect(c.observe(lag: 0.000, nowMs: 2000) == nil)  // median 0: the lags before the restart are gone
    }

    @Test func ofTwoPicturesInASecondTheSmallerLagCounts() {
        var c = LipSyncController()
        #expect(c.observe(lag: 0.080, nowMs: 0) == nil)
        #expect(c.observe(lag: 0.060, nowMs: 1000) == 2880)  // 60 ms at 48 kHz
    }

    @Test func moreThanCapacityPicturesInASecondAreJudgedOnTheFirstOnes() {
        var c = LipSyncController()
        for i in 0..<LipSyncController.capacity { _ = c.observe(lag: 0.050, nowMs: Int64(i)) }
        // A burst of later, much slower pictures in the same second does not count.
        for i in 0..<500 { _ = c.observe(lag: 0.250, nowMs: 200 + Int64(i)) }
        #expect(c.observe(lag: .nan, nowMs: 1000) == 2400)  // 50 ms; a NaN lag is ignored too
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
