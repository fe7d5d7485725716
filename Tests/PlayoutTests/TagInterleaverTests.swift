import Testing
@testable import Playout

/// An audio or video tag as the interleaver sees one (the room's are FLV tags).
struct TestTag: InterleavedTag, Equatable {
    enum Kind { case audio, video }
    var kind: Kind
    var timestampMs: UInt32
    var leadMs: UInt32 = 0
    var isVideo: Bool { kind == .video }
}

@Suite struct TagInterleaverTests {
    func audio(_ ts: UInt32) -> TestTag { TestTag(kind: .audio, timestampMs: ts) }
    func video(_ ts: UInt32) -> TestTag { TestTag(kind: .video, timestampMs: ts) }

    @Test func releasesInTimestampOrderAcrossKinds() {
        var i = TagInterleaver<TestTag>(hasVideo: true)
        var out: [TestTag] = []
        i.push(video(0), into: &out)
        i.push(video(33), into: &out)
        #expect(out.isEmpty)
        i.push(audio(0), into: &out)
        i.push(audio(21), into: &out)
        i.push(audio(42), into: &out)
        #expect(out.map(\.timestampMs) == [0, 0, 21, 33])
        #expect(out.map(\.kind) == [.audio, .video, .audio, .video])
    }

    /// Found end to end: a data tag stamped after the AAC tag pushed before it made `newest − first` underflow
    /// and trap. An out-of-order lane must only delay tags, never crash the room.
    @Test func aLaneOutOfOrderDoesNotTrapAndNeverGoesBackwards() {
        var i = TagInterleaver<TestTag>(hasVideo: true, maxWaitMs: 200)
        var out: [TestTag] = []
        i.push(audio(1216), into: &out)
        i.push(audio(1200), into: &out)
        i.push(video(1000), into: &out)
        i.push(video(1500), into: &out)
        i.push(video(1700), into: &out)
        #expect(out.map(\.timestampMs) == [1000, 1216, 1216])
    }

    @Test func aKindThatStopsDoesNotHoldTheOtherBackPastTheWait() {
        var i = TagInterleaver<TestTag>(hasVideo: true, maxWaitMs: 200)
        var out: [TestTag] = []
        for ts in stride(from: UInt32(0), through: 300, by: 100) { i.push(audio(ts), into: &out) }
        #expect(out.map(\.timestampMs) == [0])
        i.push(audio(400), into: &out)
        #expect(out.map(\.timestampMs) == [0, 100])
    }

    @Test func lowLatencySendsEachKindAtOnceMonotonicPerKind() {
        var i = TagInterleaver<TestTag>(hasVideo: true, lowLatency: true)
        var out: [TestTag] = []
        i.push(video(100), into: &out)
        #expect(out.map(\.timestampMs) == [100])
        i.push(audio(0), into: &out)
        i.push(audio(21), into: &out)
        i.push(video(133), into: &out)
        i.push(audio(15), into: &out)  // late within its own lane: takes that lane's last time
        i.push(video(120), into: &out)
        #expect(out.map(\.timestampMs) == [100, 0, 21, 133, 21, 133])
        #expect(out.map(\.kind) == [.video, .audio, .audio, .video, .audio, .video])
        var rest: [TestTag] = []
        i.flush(into: &rest)
        #expect(rest.isEmpty)
    }

    @Test func lateTagsAreClampedSoTimestampsNeverGoBack() {
        var i = TagInterleaver<TestTag>(hasVideo: false)
        var out: [TestTag] = []
        i.push(audio(100), into: &out)
        i.push(audio(90), into: &out)
        #expect(out.map(\.timestampMs) == [100, 100])
    }

    @Test func audioOnlyPassesStraightThrough() {
        var i = TagInterleaver<TestTag>(hasVideo: false)
        var out: [TestTag] = []
        i.push(audio(0), into: &out)
        #expect(out.count == 1)
    }

    @Test func flushReleasesEverythingInOrder() {
        var i = TagInterleaver<TestTag>(hasVideo: true)
        var out: [TestTag] = []
        i.push(video(40), into: &out)
        i.push(video(80), into: &out)
        i.flush(into: &out)
        #expect(out.map(\.timestampMs) == [40, 80])
    }

    /// A strict output's queue measures raw timestamps (TagQueue subtracts `leadMs`): a picture stamped
    /// ahead has already waited for its sound.
    @Test func strictOrderClearsTheVideoLead() {
        var i = TagInterleaver<TestTag>(hasVideo: true)
        var out: [TestTag] = []
        var picture = video(150)
        picture.leadMs = 150
        for tag in [audio(0), picture, audio(150), audio(170)] { i.push(tag, into: &out) }
        #expect(out.map(\.timestampMs) == [0, 150, 150])
        #expect(out.allSatisfy { $0.leadMs == 0 })
    }

    @Test func lowLatencyKeepsTheLeadForTheQueue() {
        var i = TagInterleaver<TestTag>(hasVideo: true, lowLatency: true)
        var out: [TestTag] = []
        var picture = video(150)
        picture.leadMs = 150
        i.push(picture, into: &out)
        #expect(out.map(\.leadMs) == [150])
    }
}
