import Testing
@testable import Mixing

@Suite("ActiveSpeakerDetector")
struct ActiveSpeakerDetectorTests {
    /// Feeds the same levels every 20 ms from `fromMs` through `toMs` (inclusive) and returns every change
    /// with the time it was reported.
    private func feed(
        _ detector: inout ActiveSpeakerDetector, _ levels: [(userId: String, dBov: Double)],
        from fromMs: Int64, through toMs: Int64
    ) -> [(ms: Int64, userId: String)] {
        var changes: [(ms: Int64, userId: String)] = []
        for ms in stride(from: fromMs, through: toMs, by: 20) {
            if let change = detector.update(levels: levels, nowMs: ms) { changes.append((ms, change)) }
        }
        return changes
    }

    /// Makes `userId` the current speaker with a clean 300 ms lead from `atMs`, returning the time it took over.
    private func establish(
        _ detector: inout ActiveSpeakerDetector, _ userId: String, others: [String],
        at atMs: Int64
    ) -> Int64? {
        let levels = [(userId: userId, dBov: -20.0)] + others.map { (userId: $0, dBov: -70.0) }
        let changes = feed(&detector, levels, from: atMs, through: atMs + 300)
        return changes.count == 1 && changes[0].userId == userId ? changes[0].ms : nil
    }

    @Test func theFirstSpeakerNeeds300msOfLeadNotYetAt280() {
        var detector = ActiveSpeakerDetector()
        let levels = [(userId: "alice", dBov: -20.0), (userId: "bob", dBov: -40.0)]
        let before300 = feed(&detector, levels, from: 0, through: 280)
        #expect(before300.isEmpty)
        #expect(detector.current == nil)
        let change = detector.update(levels: levels, nowMs: 300)
        #expect(change == "alice")
        #expect(detector.current == "alice")
        // No repeated event while she keeps talking.
        let whileSheTalks = feed(&detector, levels, from: 320, through: 2000)
        #expect(whileSheTalks.isEmpty)
    }

    @Test func aChallengerTakesOverAfterExactly300msOfLead() {
        var detector = ActiveSpeakerDetector()
        let tookOverAt = establish(&detector, "alice", others: ["bob"], at: 0)
        #expect(tookOverAt == 300)
        let bobLouder = [(userId: "alice", dBov: -30.0), (userId: "bob", dBov: -18.0)]
        let before300 = feed(&detector, bobLouder, from: 1000, through: 1280)
        #expect(before300.isEmpty)
        #expect(detector.current == "alice")
        let change = detector.update(levels: bobLouder, nowMs: 1300)
        #expect(change == "bob")
        #expect(detector.current == "bob")
    }

    @Test func aLeadBrokenAt200msRestartsTheCount() {
        var detector = ActiveSpeakerDetector()
        let tookOverAt = establish(&detector, "alice", others: ["bob"], at: 0)
        #expect(tookOverAt == 300)
        let bobLouder = [(userId: "alice", dBov: -30.0), (userId: "bob", dBov: -18.0)]
        let aliceLouder = [(userId: "alice", dBov: -15.0), (userId: "bob", dBov: -18.0)]
        let first200ms = feed(&detector, bobLouder, from: 1000, through: 1180)
        #expect(first200ms.isEmpty)
        let change = detector.update(levels: aliceLouder, nowMs: 1200)
        #expect(change == nil)  // alice back on top at 200 ms
        // Bob leads again from 1220: 300 ms of lead is reached at 1520, not at 1300.
        let changes = feed(&detector, bobLouder, from: 1220, through: 1600)
        #expect(changes.count == 1)
        #expect(changes.first?.ms == 1520 && changes.first?.userId == "bob")
    }

    @Test func aTalkerAtMinus55dBovNeverWins() {
        var detector = ActiveSpeakerDetector()
        let quiet = [(userId: "carol", dBov: -55.0), (userId: "dave", dBov: -80.0)]
        let quietOnly = feed(&detector, quiet, from: 0, through: 5000)
        #expect(quietOnly.isEmpty)
        #expect(detector.current == nil)
        // Nor against a current speaker who has gone silent.
        let tookOverAt = establish(&detector, "dave", others: ["carol"], at: 6000)
        #expect(tookOverAt == 6300)
        let daveSilent = [(userId: "carol", dBov: -55.0), (userId: "dave", dBov: -.infinity)]
        let whileDaveIsSilent = feed(&detector, daveSilent, from: 7000, through: 12000)
        #expect(whileDaveIsSilent.isEmpty)
        #expect(detector.current == "dave")
    }

    @Test func minus50dBovIsLoudEnough() {
        var detector = ActiveSpeakerDetector()
        let levels = [(userId: "erin", dBov: -50.0)]
        let changes = feed(&detector, levels, from: 0, through: 300)
        #expect(changes.map(\.userId) == ["erin"])
    }

    @Test func silenceKeepsTheLastSpeaker() {
        var detector = ActiveSpeakerDetector()
        let tookOverAt = establish(&detector, "alice", others: ["bob"], at: 0)
        #expect(tookOverAt == 300)
        let silence = [(userId: "alice", dBov: -Double.infinity), (userId: "bob", dBov: -Double.infinity)]
        let aMinuteOfSilence = feed(&detector, silence, from: 400, through: 60_000)
        #expect(aMinuteOfSilence.isEmpty)
        #expect(detector.current == "alice")
    }

    @Test func aRemovedSpeakerIsFollowedByTheNextAfter300ms() {
        var detector = ActiveSpeakerDetector()
        let tookOverAt = establish(&detector, "alice", others: ["bob", "carol"], at: 0)
        #expect(tookOverAt == 300)
        // Bob talks under Alice, Carol is quiet.
        let withAlice = [(userId: "alice", dBov: -15.0), (userId: "bob", dBov: -25.0), (userId: "carol", dBov: -70.0)]
        let whileAliceLeads = feed(&detector, withAlice, from: 400, through: 1000)
        #expect(whileAliceLeads.isEmpty)
        detector.remove(userId: "alice")
        #expect(detector.current == nil)
        let withoutAlice = [(userId: "bob", dBov: -25.0), (userId: "carol", dBov: -70.0)]
        let changes = feed(&detector, withoutAlice, from: 1020, through: 1400)
        #expect(changes.count == 1)
        #expect(changes.first?.ms == 1320 && changes.first?.userId == "bob")
    }

    @Test func aRemovedChallengerStopsItsCountAndItsStaleLevelIsForgotten() {
        var detector = ActiveSpeakerDetector()
        let tookOverAt = establish(&detector, "alice", others: ["bob"], at: 0)
        #expect(tookOverAt == 300)
        let bobLeading = feed(
            &detector, [(userId: "alice", dBov: -30.0), (userId: "bob", dBov: -10.0)],
            from: 1000, through: 1200)
        #expect(bobLeading.isEmpty)
        detector.remove(userId: "bob")
        // Only Alice is reported from now on; Bob's last −10 dBov must not keep leading.
        let afterwards = feed(&detector, [(userId: "alice", dBov: -30.0)], from: 1220, through: 3000)
        #expect(afterwards.isEmpty)
        #expect(detector.current == "alice")
    }

    @Test func aTieForLoudestLeadsNobody() {
        var detector = ActiveSpeakerDetector()
        let tie = [(userId: "alice", dBov: -20.0), (userId: "bob", dBov: -20.0)]
        let changes = feed(&detector, tie, from: 0, through: 1000)
        #expect(changes.isEmpty)
        #expect(detector.current == nil)
    }

    @Test func levelsReportedOnePerUserOnDifferentTicksStillCompare() {
        // Windows of different participants complete on different 20 ms ticks: each update carries one user.
        var detector = ActiveSpeakerDetector()
        var changes: [(ms: Int64, userId: String)] = []
        for window in 0..<5 {
            let base = Int64(window * 100)
            if let c = detector.update(userId: "alice", dBov: -40, nowMs: base) { changes.append((base, c)) }
            if let c = detector.update(userId: "bob", dBov: -20, nowMs: base + 40) { changes.append((base + 40, c)) }
        }
        // Bob first leads at 40 ms (Alice is already known), so he takes over at 340 ms.
        #expect(changes.count == 1)
        #expect(changes.first?.ms == 340 && changes.first?.userId == "bob")
    }

    @Test func aClockGoingBackwardsRestartsTheCount() {
        var detector = ActiveSpeakerDetector()
        let levels = [(userId: "alice", dBov: -20.0)]
        let changes = [1000, 500, 700, 800].map { detector.update(levels: levels, nowMs: $0) }
        #expect(changes == [nil, nil, nil, "alice"])
    }
}
