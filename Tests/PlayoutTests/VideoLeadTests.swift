import Testing
@testable import Playout

@Suite struct VideoLeadTests {
    /// Runs 30 fps canvases from `from` for `ms`, observing `ahead` on each; returns the leads handed out.
    func run(_ lead: inout VideoLead, from: Int64, ms: Int64, ahead: Int64?) -> [Int64] {
        stride(from: from, to: from + ms, by: 33).map { now in
            let l = lead.next(nowMs: now)
            if let ahead { lead.observe(aheadOfSoundMs: ahead) }
            return l
        }
    }

    @Test func startsAtZeroAndRisesToTheSmallestSpareLessTheMarginFourMsPerCanvas() {
        var lead = VideoLead()
        // The first second only observes.
        #expect(run(&lead, from: 0, ms: 1000, ahead: 65).allSatisfy { $0 == 0 })
        let leads = run(&lead, from: 1023, ms: 1000, ahead: 65)
        #expect(lead.targetMs == 60)
        #expect(Array(leads.prefix(4)) == [4, 8, 12, 16])
        #expect(leads.last == 60)
    }

    @Test func theSlowestParticipantSetsTheTarget() {
        var lead = VideoLead()
        for now in stride(from: Int64(0), to: 1000, by: 33) {
            _ = lead.next(nowMs: now)
            lead.observe(aheadOfSoundMs: 80)
            lead.observe(aheadOfSoundMs: 30)
        }
        _ = lead.next(nowMs: 1023)
        #expect(lead.targetMs == 25)
    }

    @Test func smallChangesAreIgnoredAndATrailingPictureTakesItToZero() {
        var lead = VideoLead()
        _ = run(&lead, from: 0, ms: 2000, ahead: 65)
        #expect(lead.targetMs == 60)
        _ = run(&lead, from: 2000, ms: 1000, ahead: 72)  // 67: within the hysteresis
        _ = lead.next(nowMs: 3000)
        #expect(lead.targetMs == 60)
        let leads = run(&lead, from: 3000, ms: 1000, ahead: -30) + run(&lead, from: 4000, ms: 1000, ahead: nil)
        #expect(leads.first == 60)
        #expect(lead.targetMs == 0)
        #expect(leads.last == 0)
        // Consecutive canvases never differ by more than a step: timestamps stay evenly spaced.
        #expect(zip(leads, leads.dropFirst()).allSatisfy { abs($0 - $1) <= VideoLead.stepMs })
    }

    @Test func withoutObservationsTheLeadStays() {
        var lead = VideoLead()
        _ = run(&lead, from: 0, ms: 3000, ahead: 100)
        #expect(lead.leadMs == 95)
        #expect(run(&lead, from: 3000, ms: 3000, ahead: nil).allSatisfy { $0 == 95 })
    }

    @Test func aSuspectSpareIsCapped() {
        var lead = VideoLead()
        _ = run(&lead, from: 0, ms: 1100, ahead: 5000)
        #expect(lead.targetMs == VideoLead.maxLeadMs)
    }
}
