import Forwarding
import Testing

/// Who fills a receiver's slots.
@Suite struct SlotAllocatorTests {
    static let vp8: Set<String> = ["VP8"]
    func cam(_ user: String, spoke: Int64? = nil, codec: String = "VP8", on: Bool = true) -> SlotAllocator.Candidate {
        .init(key: StreamKey(userId: user, source: .camera), codec: codec, lastSpokeMs: spoke, available: on)
    }
    func slots(_ count: Int, accepts: Set<String> = vp8) -> [SlotAllocator.Slot] {
        (0..<count).map { .init(mid: "\($0 + 2)", accepts: accepts) }
    }
    func names(_ a: SlotAllocator.Allocation) -> [String] { a.shown.map { $0?.userId ?? "-" } }

    @Test func theOthersInLayoutOrderNeverTheReceiver() {
        let a = SlotAllocator.allocate(
            receiver: "bob", slots: slots(3), candidates: [cam("ann"), cam("bob"), cam("cid")], chosen: [:],
            previous: [])
        #expect(names(a) == ["ann", "cid", "-"])
        #expect(a.unforwardable.isEmpty)
    }

    @Test func moreStreamsThanSlotsShowsTheMostRecentSpeakersInLayoutOrder() {
        let candidates = [cam("ann", spoke: 100), cam("bob", spoke: 900), cam("cid"), cam("dan", spoke: 500)]
        let a = SlotAllocator.allocate(
            receiver: "eve", slots: slots(2), candidates: candidates, chosen: [:], previous: [])
        #expect(names(a) == ["bob", "dan"])
    }

    @Test func aStreamKeepsItsSlotWhenAnotherComesIn() {
        let previous: [StreamKey?] = [
            StreamKey(userId: "bob", source: .camera), StreamKey(userId: "dan", source: .camera),
        ]
        // Ann speaks now: she replaces the least recent speaker (dan), in dan's slot; bob stays in his.
        let candidates = [cam("ann", spoke: 1000), cam("bob", spoke: 900), cam("cid"), cam("dan", spoke: 500)]
        let a = SlotAllocator.allocate(
            receiver: "eve", slots: slots(2), candidates: candidates, chosen: [:], previous: previous)
        #expect(names(a) == ["bob", "ann"])
    }

    @Test func aSubscriptionOverridesTheAutomaticChoiceOfItsSlotOnly() {
        let chosen = ["3": StreamKey(userId: "cid", source: .camera)]
        let a = SlotAllocator.allocate(
            receiver: "eve", slots: slots(2), candidates: [cam("ann"), cam("bob"), cam("cid")], chosen: chosen,
            previous: [])
        #expect(names(a) == ["ann", "cid"])
    }

    @Test func aSubscriptionToSomeoneAbsentShowsNothing() {
        let chosen = ["2": StreamKey(userId: "zed", source: .screen)]
        let a = SlotAllocator.allocate(
            receiver: "eve", slots: slots(1), candidates: [cam("ann")], chosen: chosen, previous: [])
        #expect(names(a) == ["-"])
    }

    @Test func aCameraTurnedOffKeepsItsSlotUnlessACameraThatIsOnNeedsIt() {
        let room = SlotAllocator.allocate(
            receiver: "eve", slots: slots(2), candidates: [cam("ann", on: false), cam("bob")], chosen: [:],
            previous: [])
        #expect(names(room) == ["ann", "bob"])
        let crowded = SlotAllocator.allocate(
            receiver: "eve", slots: slots(1), candidates: [cam("ann", spoke: 900, on: false), cam("bob")],
            chosen: [:], previous: [StreamKey(userId: "ann", source: .camera)])
        #expect(names(crowded) == ["bob"])
    }

    @Test func aCodecNoSlotTakesIsUnforwardableAndSkipped() {
        let a = SlotAllocator.allocate(
            receiver: "eve", slots: slots(2), candidates: [cam("ann", codec: "H264/42c"), cam("bob")], chosen: [:],
            previous: [])
        #expect(names(a) == ["bob", "-"])
        #expect(a.unforwardable == [StreamKey(userId: "ann", source: .camera)])
    }

    @Test func eachStreamGoesToASlotThatTakesItsCodec() {
        let mixed: [SlotAllocator.Slot] = [.init(mid: "2", accepts: ["VP8"]), .init(mid: "3", accepts: ["H264/42c"])]
        let a = SlotAllocator.allocate(
            receiver: "eve", slots: mixed, candidates: [cam("ann", codec: "H264/42c"), cam("bob")], chosen: [:],
            previous: [])
        #expect(names(a) == ["bob", "ann"])
    }
}

@Suite struct ForwardCodecTests {
    @Test func browsersH264FmtpLinesAreReadForProfileAndMode() {
        let cb = ForwardCodec(
            name: "H264", fmtp: "level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f")
        #expect(cb == .h264(profile: 0x42, constrained: true))
        #expect(cb?.key == "H264/42c")
        let baseline = ForwardCodec(name: "h264", fmtp: "profile-level-id=42001f; packetization-mode=1")
        #expect(baseline?.accepts == ["H264/42", "H264/42c"])
        #expect(ForwardCodec(name: "H264", fmtp: "profile-level-id=640c1f;packetization-mode=1")?.key == "H264/64")
        #expect(ForwardCodec(name: "H264", fmtp: "profile-level-id=42e01f") == nil)  // mode 0
        #expect(ForwardCodec(name: "H264", fmtp: "packetization-mode=1;profile-level-id=zz") == nil)
        #expect(ForwardCodec(name: "VP9", fmtp: nil) == nil)
        #expect(ForwardCodec(name: "vp8", fmtp: nil)?.accepts == ["VP8"])
    }
}

@Suite struct LayerSelectorTests {
    typealias L = LayerSelector.Layer
    /// A sender's three layers as libwebrtc sends a 1280×720 camera: quarter, half and full size.
    static let three = [
        L(width: 320, height: 180, bitrateBps: 150_000, available: true),
        L(width: 640, height: 360, bitrateBps: 500_000, available: true),
        L(width: 1280, height: 720, bitrateBps: 1_700_000, available: true),
    ]

    static func single(_ bps: Int) -> [L] { [L(width: 640, height: 360, bitrateBps: bps, available: true)] }

    static func pick(_ slots: [LayerSelector.SlotDemand], budget: Int?) -> [Int?] {
        var chosen: [Int?] = []
        LayerSelector.forSlots(slots, budgetBps: budget, into: &chosen)
        return chosen
    }

    @Test func aReceiverAt100kbpsIsNotSentA1500kbpsStream() {
        #expect(Self.pick([.init(layers: Self.single(1_500_000), current: 0)], budget: 100_000) == [nil])
    }

    @Test func slotsAreServedInOrderWithinTheEstimate() {
        let slots = [400_000, 700_000, 300_000].map { LayerSelector.SlotDemand(layers: Self.single($0), current: 0) }
        #expect(Self.pick(slots, budget: 1_000_000) == [0, nil, 0])
    }

    @Test func aPausedSlotComesBackOnlyWithRoomToSpare() {
        let paused = LayerSelector.SlotDemand(layers: Self.single(1_000_000), current: nil)
        let sending = LayerSelector.SlotDemand(layers: Self.single(1_000_000), current: 0)
        #expect(Self.pick([paused], budget: 1_100_000) == [nil])
        #expect(Self.pick([paused], budget: 1_150_000) == [0])
        #expect(Self.pick([sending], budget: 1_000_000) == [0])
        #expect(Self.pick([LayerSelector.SlotDemand(layers: Self.single(9_000_000), current: nil)], budget: nil) == [0])
    }

    @Test func aLowEstimateGetsTheLowLayerAndNoEstimateTheHighest() {
        #expect(Self.pick([.init(layers: Self.three, current: 2)], budget: 300_000) == [0])
        #expect(Self.pick([.init(layers: Self.three, current: 2)], budget: 1_000_000) == [1])
        #expect(Self.pick([.init(layers: Self.three, current: 0)], budget: nil) == [2])
        #expect(Self.pick([.init(layers: Self.three, current: 2)], budget: 100_000) == [nil])
    }

    @Test func switchingUpNeedsMarginButStayingDoesNot() {
        // 1.7 Mbps fits 1.8 Mbps for the layer already sent, but not as an upswitch (needs 1.955 Mbps).
        #expect(Self.pick([.init(layers: Self.three, current: 2)], budget: 1_800_000) == [2])
        #expect(Self.pick([.init(layers: Self.three, current: 1)], budget: 1_800_000) == [1])
        #expect(Self.pick([.init(layers: Self.three, current: 1)], budget: 1_955_000) == [2])
    }

    @Test func aSmallTileWantsNoMoreThanTheLayerCoveringIt() {
        #expect(Self.pick([.init(layers: Self.three, current: nil, maxWidth: 320, maxHeight: 180)], budget: nil) == [0])
        #expect(Self.pick([.init(layers: Self.three, current: nil, maxWidth: 400, maxHeight: 200)], budget: nil) == [1])
        #expect(
            Self.pick([.init(layers: Self.three, current: nil, maxWidth: 4000, maxHeight: nil)], budget: nil) == [2])
    }

    @Test func aStoppedLayerIsNotChosen() {
        var layers = Self.three
        layers[2].available = false
        #expect(Self.pick([.init(layers: layers, current: 2)], budget: nil) == [1])
    }

    @Test func theMixerDecodesTheSmallestLayerCoveringItsTile() {
        #expect(LayerSelector.forTile(Self.three, width: 320, height: 180, bothDimensions: true) == 0)
        #expect(LayerSelector.forTile(Self.three, width: 426, height: 240, bothDimensions: true) == 1)
        #expect(LayerSelector.forTile(Self.three, width: 640, height: 480, bothDimensions: true) == 2)
        // Contained, a 640×480 tile shows a 16:9 picture 640 wide: the half-size layer covers it.
        #expect(LayerSelector.forTile(Self.three, width: 640, height: 480, bothDimensions: false) == 1)
        #expect(LayerSelector.forTile(Self.three, width: 1920, height: 1080, bothDimensions: true) == 2)
    }

    @Test func beforeAnySizeIsKnownTheMixerTakesTheFirstAvailableLayer() {
        let unknown = [
            L(width: 0, height: 0, bitrateBps: 0, available: false),
            L(width: 0, height: 0, bitrateBps: 0, available: true),
        ]
        #expect(LayerSelector.forTile(unknown, width: 320, height: 180, bothDimensions: true) == 1)
        #expect(LayerSelector.forTile([], width: 320, height: 180, bothDimensions: true) == nil)
    }
}

@Suite struct KeyframeCoalescerTests {
    @Test func wishesWithin300msBecomeOneRequestAndALateWishWaitsForTheInterval() {
        var c = KeyframeCoalescer()
        var sent: [Int64] = []
        for now: Int64 in [0, 10, 20, 309, 310, 900] {
            if now == 10 || now == 20 { c.want() }
            if now == 10 { c.want() }
            if c.take(nowMs: now) { sent.append(now) }
        }
        // Two wishes at 10 ms: one request. The wish at 20 ms waits for 310 ms; nothing is wished after.
        #expect(sent == [10, 310])
        #expect(c.wishes == 3)
        #expect(c.requests == 2)
    }
}

@Suite struct ForwardHistoryTests {
    @Test func packetsAreFoundByNumberUntilOverwrittenAcrossTheWrap() throws {
        var h = ForwardHistory(capacity: 4)
        for s: UInt16 in [65_534, 65_535, 0, 1] {
            h.record(
                sequence: s, timestamp: UInt32(s), marker: s == 1, payloadType: 96, payload: [UInt8(s & 0xFF)][...])
        }
        var found: [UInt8] = []
        #expect(h.withPacket(65_535) { found = $0.payload })
        #expect(found == [0xFF])
        h.record(sequence: 2, timestamp: 2, marker: false, payloadType: 96, payload: [2][...])
        #expect(!h.withPacket(65_534) { _ in })
        var last: (marker: Bool, timestamp: UInt32)?
        #expect(h.withPacket(1) { last = ($0.marker, $0.timestamp) })
        #expect(last?.marker == true)
        #expect(last?.timestamp == 1)
        h.clear()
        #expect(!h.withPacket(1) { _ in })
    }
}

@Suite struct UpswitchProbeTests {
    static func calm(_ p: inout UpswitchProbe, until end: Int64, estimate: Int = 235_000, sent: Int = 150_000) {
        for t in stride(from: Int64(0), to: end, by: 1000) {
            #expect(p.budget(estimate: estimate, sentBps: sent, lossPercent: 0, wantsMore: true, nowMs: t) == estimate)
        }
    }

    @Test func aCalmReceiverIsLiftedAStepAtATimeUntilItsEstimateCoversWhatItIsSent() {
        var p = UpswitchProbe()
        // libwebrtc's REMB of a 150 kb/s stream: 1.5 × 150 + 10 = 235 kb/s, never more.
        Self.calm(&p, until: 2000)
        #expect(p.budget(estimate: 235_000, sentBps: 150_000, lossPercent: 0, wantsMore: true, nowMs: 2000) == 700_000)
        #expect(p.lifting)
        // The larger layer (500 kb/s) is sent; the REMB ramps up to it: the lift holds meanwhile.
        #expect(p.budget(estimate: 300_000, sentBps: 500_000, lossPercent: 0, wantsMore: false, nowMs: 3000) == 700_000)
        #expect(p.budget(estimate: 520_000, sentBps: 500_000, lossPercent: 0, wantsMore: true, nowMs: 4000) == 520_000)
        #expect(!p.lifting && p.currentWaitMs == UpswitchProbe.stepMs)
        // The next step a second later.
        #expect(
            p.budget(estimate: 760_000, sentBps: 500_000, lossPercent: 0, wantsMore: true, nowMs: 5000) == 2_100_000)
    }

    @Test func nothingIsLiftedForAReceiverThatWantsNoMoreOrHasNoEstimate() {
        var p = UpswitchProbe()
        for t in stride(from: Int64(0), to: 20_000, by: 1000) {
            #expect(
                p.budget(estimate: 235_000, sentBps: 150_000, lossPercent: 0, wantsMore: false, nowMs: t) == 235_000)
        }
        #expect(p.budget(estimate: nil, sentBps: 150_000, lossPercent: 0, wantsMore: true, nowMs: 21_000) == nil)
    }

    @Test func congestionDuringALiftEndsItAndDoublesTheWait() {
        var p = UpswitchProbe()
        Self.calm(&p, until: 2000)
        #expect(p.budget(estimate: 235_000, sentBps: 150_000, lossPercent: 0, wantsMore: true, nowMs: 2000) == 700_000)
        // The REMB falls by more than 10 %: over-use. Back to the REMB, and the next lift waits 4 s.
        #expect(p.budget(estimate: 200_000, sentBps: 500_000, lossPercent: 0, wantsMore: true, nowMs: 3000) == 200_000)
        #expect(!p.lifting && p.currentWaitMs == 4000)
        #expect(
            p.budget(estimate: 200_000, sentBps: 150_000, lossPercent: 0, wantsMore: true, nowMs: 6000) == 200_000)
        #expect(
            p.budget(estimate: 200_000, sentBps: 150_000, lossPercent: 0, wantsMore: true, nowMs: 7000) == 700_000)
        // Loss above 5 % is congestion too.
        #expect(
            p.budget(estimate: 200_000, sentBps: 150_000, lossPercent: 8, wantsMore: true, nowMs: 8000) == 200_000)
        #expect(p.currentWaitMs == 8000)
    }

    @Test func aLiftTheEstimateNeverCoversEndsAfterTheHoldAndWaitsLonger() {
        var p = UpswitchProbe()
        Self.calm(&p, until: 2000, estimate: 250_000, sent: 100_000)
        #expect(p.budget(estimate: 250_000, sentBps: 100_000, lossPercent: 0, wantsMore: true, nowMs: 2000) == 500_000)
        #expect(
            p.budget(estimate: 250_000, sentBps: 300_000, lossPercent: 0, wantsMore: true, nowMs: 11_000) == 500_000)
        #expect(
            p.budget(estimate: 250_000, sentBps: 300_000, lossPercent: 0, wantsMore: true, nowMs: 12_000) == 250_000)
        #expect(!p.lifting && p.currentWaitMs == 4000)
    }
}
