import Media
import Testing
@testable import Layout

@Suite("LayoutEngine: pip")
struct PipLayoutTests {
    private func r(_ x: Int, _ y: Int, _ w: Int, _ h: Int) -> Rect { Rect(x: x, y: y, width: w, height: h) }

    private func pip(
        _ users: [String], _ width: Int, _ height: Int, layout: Layout = .pip, anchor: String? = nil
    ) -> [Placement] {
        LayoutEngine.placements(
            for: layout, participants: users, canvasWidth: width, canvasHeight: height, anchor: anchor)
    }

    /// The host plus `guests` guests g1…gN.
    private func users(guests: Int) -> [String] { ["host"] + (0..<guests).map { "g\($0 + 1)" } }

    @Test func aloneTheAnchorFillsTheCanvas() {
        #expect(
            pip(users(guests: 0), 1280, 720) == [Placement(userId: "host", rect: r(0, 0, 1280, 720), z: 0, fit: .cover)]
        )
        #expect(pip([], 1280, 720) == [])
    }

    @Test func oneGuestSitsBottomRightInsetBySixteenOn720p() {
        #expect(
            pip(users(guests: 1), 1280, 720) == [
                Placement(userId: "host", rect: r(0, 0, 1280, 720), z: 0, fit: .cover),
                Placement(userId: "g1", rect: r(944, 524, 320, 180), z: 1, fit: .cover),
            ])
    }

    @Test func twoGuestsStackUpward() {
        #expect(
            pip(users(guests: 2), 1280, 720).map(\.rect) == [
                r(0, 0, 1280, 720), r(944, 524, 320, 180), r(944, 328, 320, 180),
            ])
    }

    @Test func fourthGuestStartsASecondColumnOn720p() {
        let placements = pip(users(guests: 4), 1280, 720)
        #expect(placements.map(\.userId) == ["host", "g1", "g2", "g3", "g4"])
        #expect(
            placements.map(\.rect) == [
                r(0, 0, 1280, 720),
                r(944, 524, 320, 180), r(944, 328, 320, 180), r(944, 132, 320, 180),
                r(608, 524, 320, 180),
            ])
        #expect(
            placements.dropFirst().allSatisfy { $0.z == 1 && $0.fit == .cover && $0.alpha == 1 && $0.border == nil })
    }

    @Test func sevenGuestsWrapIntoAThirdColumnOn720p() {
        #expect(
            pip(users(guests: 7), 1280, 720).map(\.rect) == [
                r(0, 0, 1280, 720),
                r(944, 524, 320, 180), r(944, 328, 320, 180), r(944, 132, 320, 180),
                r(608, 524, 320, 180), r(608, 328, 320, 180), r(608, 132, 320, 180),
                r(272, 524, 320, 180),
            ])
    }

    @Test func guestsBeyondNineAreHeardNotSeen() {
        let placements = pip(users(guests: 11), 1280, 720)
        #expect(placements.count == 10)
        #expect(placements.last == Placement(userId: "g9", rect: r(272, 132, 320, 180), z: 1, fit: .cover))
        #expect(LayoutEngine.pipSlots(canvasWidth: 1280, canvasHeight: 720).count == 9)
    }

    @Test func on360pTheMarginIsEight() {
        let one = pip(users(guests: 1), 640, 360)
        #expect(
            one == [
                Placement(userId: "host", rect: r(0, 0, 640, 360), z: 0, fit: .cover),
                Placement(userId: "g1", rect: r(472, 262, 160, 90), z: 1, fit: .cover),
            ])
        #expect(
            pip(users(guests: 2), 640, 360).map(\.rect) == [
                r(0, 0, 640, 360), r(472, 262, 160, 90), r(472, 164, 160, 90),
            ])
        #expect(
            pip(users(guests: 4), 640, 360).map(\.rect) == [
                r(0, 0, 640, 360),
                r(472, 262, 160, 90), r(472, 164, 160, 90), r(472, 66, 160, 90), r(304, 262, 160, 90),
            ])
        #expect(
            pip(users(guests: 7), 640, 360).map(\.rect) == [
                r(0, 0, 640, 360),
                r(472, 262, 160, 90), r(472, 164, 160, 90), r(472, 66, 160, 90),
                r(304, 262, 160, 90), r(304, 164, 160, 90), r(304, 66, 160, 90),
                r(136, 262, 160, 90),
            ])
    }

    @Test func oddCanvasesStayEvenAligned() {
        // 642×362: tile 160×90, margin 8, right edge floorEven(634) = 634, bottom floorEven(354) = 354.
        #expect(pip(users(guests: 1), 642, 362).map(\.rect) == [r(0, 0, 642, 362), r(474, 264, 160, 90)])
        // 643×363: the anchor snaps to 642×362; right edge floorEven(635) = 634, bottom floorEven(355) = 354.
        #expect(pip(users(guests: 1), 643, 363).map(\.rect) == [r(0, 0, 642, 362), r(474, 264, 160, 90)])
    }

    @Test func tinyCanvasesShowOnlyTheAnchor() {
        // 6×6: the tile would be 0×0.
        #expect(pip(users(guests: 3), 6, 6) == [Placement(userId: "host", rect: r(0, 0, 6, 6), z: 0, fit: .cover)])
        // 16×16: 4×4 tiles, margin 2: x 10, 4 and y 10, 4.
        #expect(
            LayoutEngine.pipSlots(canvasWidth: 16, canvasHeight: 16)
                == [r(10, 10, 4, 4), r(10, 4, 4, 4), r(4, 10, 4, 4), r(4, 4, 4, 4)])
    }

    @Test func theLayoutAnchorWinsWhenPresent() {
        let layout = Layout(mode: .pip, anchor: "carol")
        let placements = pip(["alice", "bob", "carol", "dave"], 1280, 720, layout: layout, anchor: "bob")
        #expect(placements.map(\.userId) == ["carol", "alice", "bob", "dave"])
        #expect(placements.first?.rect == r(0, 0, 1280, 720))
        #expect(
            LayoutEngine.effectiveAnchor(for: layout, participants: ["alice", "bob", "carol"], anchor: "bob") == "carol"
        )
    }

    @Test func anAbsentLayoutAnchorFallsBackToTheRoomAnchor() {
        let layout = Layout(mode: .pip, anchor: "carol")
        #expect(
            pip(["alice", "bob", "dave"], 1280, 720, layout: layout, anchor: "bob").map(\.userId) == [
                "bob", "alice", "dave",
            ])
        #expect(
            LayoutEngine.effectiveAnchor(for: layout, participants: ["alice", "bob", "dave"], anchor: "bob") == "bob")
    }

    @Test func withNeitherAnchorPresentTheFirstJoinerIsTheAnchor() {
        let layout = Layout(mode: .pip, anchor: "carol")
        #expect(pip(["alice", "bob"], 1280, 720, layout: layout, anchor: "zed").map(\.userId) == ["alice", "bob"])
        #expect(LayoutEngine.effectiveAnchor(for: layout, participants: ["alice", "bob"], anchor: "zed") == "alice")
        #expect(LayoutEngine.effectiveAnchor(for: .pip, participants: ["bob", "alice"]) == "bob")
        #expect(LayoutEngine.effectiveAnchor(for: .pip, participants: []) == nil)
        // Reported for any mode, so the room can say who would be the anchor.
        #expect(
            LayoutEngine.effectiveAnchor(for: Layout(mode: .grid, anchor: "bob"), participants: ["alice", "bob"])
                == "bob")
    }

    @Test func duplicatesCountOnceAndTheAnchorIsNotAGuest() {
        let placements = pip(["a", "b", "a", "c", "b"], 1280, 720, anchor: "b")
        #expect(placements.map(\.userId) == ["b", "a", "c"])
        #expect(placements.map(\.rect) == [r(0, 0, 1280, 720), r(944, 524, 320, 180), r(944, 328, 320, 180)])
    }

    @Test func pipIgnoresRegionsAndOtherModesIgnoreTheAnchor() {
        let regions = [Region(userId: "b", x: 0, y: 0, width: 100, height: 100)]
        #expect(
            pip(["a", "b"], 1280, 720, layout: Layout(mode: .pip, regions: regions)).map(\.rect)
                == [r(0, 0, 1280, 720), r(944, 524, 320, 180)])
        #expect(
            pip(["a", "b"], 1280, 720, layout: Layout(mode: .grid, anchor: "b"), anchor: "b").map(\.userId) == [
                "a", "b",
            ])
        #expect(
            pip(["a", "b"], 1280, 720, layout: Layout(mode: .custom, regions: regions, anchor: "a")).map(\.userId) == [
                "b"
            ])
    }
}
