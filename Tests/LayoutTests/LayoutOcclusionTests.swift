import Media
import Testing
@testable import Layout

@Suite("LayoutEngine: occlusion")
struct LayoutOcclusionTests {
    private func r(_ x: Int, _ y: Int, _ w: Int, _ h: Int) -> Rect { Rect(x: x, y: y, width: w, height: h) }

    private func p(_ user: String, _ rect: Rect, z: Int = 0, fit: FitMode = .cover, alpha: Double = 1) -> Placement {
        Placement(userId: user, rect: rect, z: z, fit: fit, alpha: alpha)
    }

    @Test func aTileUnderAnOpaqueFullCoverIsHidden() {
        let placements = [p("small", r(944, 524, 320, 180)), p("full", r(0, 0, 1280, 720), z: 1)]
        #expect(LayoutEngine.visiblePlacements(placements) == [false, true])
    }

    @Test func anIdenticalRectAboveHidesTheOneBelowEvenWithContain() {
        // A contain tile paints its bars with the background, so it is opaque over its whole rect.
        let placements = [p("a", r(0, 0, 640, 360)), p("b", r(0, 0, 640, 360), fit: .contain)]
        #expect(LayoutEngine.visiblePlacements(placements) == [false, true])
    }

    @Test func translucentTilesHideNothing() {
        let placements = [p("a", r(0, 0, 640, 360)), p("b", r(0, 0, 1280, 720), z: 1, alpha: 0.99)]
        #expect(LayoutEngine.visiblePlacements(placements) == [true, true])
    }

    @Test func partialOrCombinedCoverDoesNotHide() {
        // Each half covers part of "a"; together they cover it all, which is not detected (drawing is still right).
        // "edge" covers all of "a" but its right 2 columns, and all of "left" but its bottom 20 rows.
        let placements = [
            p("a", r(100, 100, 200, 200)), p("left", r(0, 0, 200, 720), z: 1), p("right", r(200, 0, 1080, 720), z: 1),
            p("edge", r(0, 0, 298, 700), z: 2),
        ]
        #expect(LayoutEngine.visiblePlacements(placements) == [true, true, true, true])
    }

    @Test func onlyPlacementsLaterInTheListCount() {
        // "big" is drawn first: it cannot hide "small", which is drawn over it.
        let placements = [p("big", r(0, 0, 1280, 720)), p("small", r(10, 10, 100, 100))]
        #expect(LayoutEngine.visiblePlacements(placements) == [true, true])
        #expect(LayoutEngine.visiblePlacements([]) == [])
    }

    @Test func pipAndGridPlacementsAreAllVisible() {
        let pip = LayoutEngine.placements(
            for: .pip, participants: ["a", "b", "c"], canvasWidth: 1280, canvasHeight: 720)
        #expect(LayoutEngine.visiblePlacements(pip) == [true, true, true])
        let grid = LayoutEngine.placements(
            for: .grid, participants: ["a", "b", "c", "d", "e"], canvasWidth: 1280, canvasHeight: 720)
        #expect(LayoutEngine.visiblePlacements(grid) == [true, true, true, true, true])
    }

    @Test func aCustomFullScreenRegionOnTopHidesEverythingBelow() {
        let layout = Layout(
            mode: .custom,
            regions: [
                Region(userId: "a", x: 0, y: 0, width: 640, height: 360),
                Region(userId: "b", x: 640, y: 0, width: 640, height: 360, alpha: 0.5),
                Region(userId: "c", x: 0, y: 0, width: 1280, height: 720, z: 5, fit: .contain),
                Region(userId: "d", x: 960, y: 540, width: 320, height: 180, z: 6),
            ])
        let placements = LayoutEngine.placements(
            for: layout, participants: ["a", "b", "c", "d"], canvasWidth: 1280, canvasHeight: 720)
        #expect(placements.map(\.userId) == ["a", "b", "c", "d"])
        #expect(LayoutEngine.visiblePlacements(placements) == [false, false, true, true])
    }
}
