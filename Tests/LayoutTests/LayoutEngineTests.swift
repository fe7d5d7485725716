import Media
import Testing
@testable import Layout

@Suite("LayoutEngine")
struct LayoutEngineTests {
    private func rects(grid n: Int) -> [Rect] {
        let users = (0..<n).map { "u\($0)" }
        let placements = LayoutEngine.placements(for: .grid, participants: users, canvasWidth: 1280, canvasHeight: 720)
        #expect(placements.map(\.userId) == users, "grid keeps join order")
        #expect(placements.allSatisfy { $0.fit == .contain && $0.z == 0 })
        return placements.map(\.rect)
    }

    private func r(_ x: Int, _ y: Int, _ w: Int, _ h: Int) -> Rect { Rect(x: x, y: y, width: w, height: h) }

    @Test func gridOfOneFillsTheCanvas() {
        #expect(rects(grid: 1) == [r(0, 0, 1280, 720)])
    }

    @Test func gridOfTwoIsSideBySide() {
        #expect(rects(grid: 2) == [r(0, 0, 640, 720), r(640, 0, 640, 720)])
    }

    @Test func gridOfThreeLeavesTheLastCellEmpty() {
        #expect(rects(grid: 3) == [r(0, 0, 640, 360), r(640, 0, 640, 360), r(0, 360, 640, 360)])
    }

    @Test func gridOfFourIsTwoByTwo() {
        #expect(rects(grid: 4) == [r(0, 0, 640, 360), r(640, 0, 640, 360), r(0, 360, 640, 360), r(640, 360, 640, 360)])
    }

    @Test func gridOfFiveIsThreeByTwoWithEvenEdges() {
        // Column edges floorEven(1280·i/3) = 0, 426, 852, 1280.
        #expect(
            rects(grid: 5) == [
                r(0, 0, 426, 360), r(426, 0, 426, 360), r(852, 0, 428, 360),
                r(0, 360, 426, 360), r(426, 360, 426, 360),
            ])
    }

    @Test func gridOfSixFillsThreeByTwo() {
        #expect(
            rects(grid: 6) == [
                r(0, 0, 426, 360), r(426, 0, 426, 360), r(852, 0, 428, 360),
                r(0, 360, 426, 360), r(426, 360, 426, 360), r(852, 360, 428, 360),
            ])
    }

    @Test func gridOfSevenIsThreeByThreeWithOneInTheLastRow() {
        // Row edges floorEven(720·i/3) = 0, 240, 480, 720.
        #expect(
            rects(grid: 7) == [
                r(0, 0, 426, 240), r(426, 0, 426, 240), r(852, 0, 428, 240),
                r(0, 240, 426, 240), r(426, 240, 426, 240), r(852, 240, 428, 240),
                r(0, 480, 426, 240),
            ])
    }

    @Test func gridOfEightLeavesTheLastCellEmpty() {
        #expect(
            rects(grid: 8) == [
                r(0, 0, 426, 240), r(426, 0, 426, 240), r(852, 0, 428, 240),
                r(0, 240, 426, 240), r(426, 240, 426, 240), r(852, 240, 428, 240),
                r(0, 480, 426, 240), r(426, 480, 426, 240),
            ])
    }

    @Test func gridReflowsWhenSomeoneLeaves() {
        // Five users, the second leaves: the other four close up into 2×2 in join order.
        let placements = LayoutEngine.placements(
            for: .grid, participants: ["a", "c", "d", "e"], canvasWidth: 1280, canvasHeight: 720)
        #expect(
            placements == [
                Placement(userId: "a", rect: r(0, 0, 640, 360), z: 0, fit: .contain),
                Placement(userId: "c", rect: r(640, 0, 640, 360), z: 0, fit: .contain),
                Placement(userId: "d", rect: r(0, 360, 640, 360), z: 0, fit: .contain),
                Placement(userId: "e", rect: r(640, 360, 640, 360), z: 0, fit: .contain),
            ])
    }

    @Test func gridTilesAreOpaqueWithoutBorder() {
        let placements = LayoutEngine.placements(
            for: Layout(
                mode: .grid,
                regions: [
                    Region(
                        userId: "a", x: 0, y: 0, width: 2, height: 2, alpha: 0.5,
                        border: RegionBorder(color: "#FFFFFF", width: 2))
                ]), participants: ["a"], canvasWidth: 1280, canvasHeight: 720)
        #expect(
            placements == [Placement(userId: "a", rect: r(0, 0, 1280, 720), z: 0, fit: .contain, alpha: 1, border: nil)]
        )
    }

    @Test func customPlacementsCarryAlphaAndBorder() {
        let layout = Layout(
            mode: .custom,
            regions: [
                Region(userId: "a", x: 0, y: 0, width: 1280, height: 720),
                Region(
                    userId: "b", x: 960, y: 540, width: 320, height: 180, z: 1, alpha: 0.75,
                    border: RegionBorder(color: "#FFFFFF", width: 4)),
            ])
        let placements = LayoutEngine.placements(
            for: layout, participants: ["a", "b"], canvasWidth: 1280, canvasHeight: 720)
        #expect(
            placements == [
                Placement(userId: "a", rect: r(0, 0, 1280, 720), z: 0, fit: .cover, alpha: 1, border: nil),
                Placement(
                    userId: "b", rect: r(960, 540, 320, 180), z: 1, fit: .cover, alpha: 0.75,
                    border: TileBorder(color: YUVColor(y: 235, u: 128, v: 128), width: 4)),
            ])
    }

    @Test func gridOfNineIsThreeByThree() {
        #expect(
            rects(grid: 9) == [
                r(0, 0, 426, 240), r(426, 0, 426, 240), r(852, 0, 428, 240),
                r(0, 240, 426, 240), r(426, 240, 426, 240), r(852, 240, 428, 240),
                r(0, 480, 426, 240), r(426, 480, 426, 240), r(852, 480, 428, 240),
            ])
    }

    @Test func gridOfNobodyIsEmptyAndDuplicatesCountOnce() {
        #expect(rects(grid: 0) == [])
        let placements = LayoutEngine.placements(
            for: .grid, participants: ["a", "b", "a"], canvasWidth: 1280, canvasHeight: 720)
        #expect(placements.map(\.userId) == ["a", "b"])
    }

    @Test func gridShapeIsCeilSqrtColumns() {
        let shapes = [1, 2, 3, 4, 5, 9, 10, 16, 17].map { LayoutEngine.gridShape(count: $0) }
        #expect(shapes.map(\.columns) == [1, 2, 2, 2, 3, 3, 4, 4, 5])
        #expect(shapes.map(\.rows) == [1, 1, 2, 2, 2, 3, 3, 4, 4])
    }

    @Test func customShowsOnlyPresentUsersSortedByZStably() {
        let layout = Layout(
            mode: .custom,
            regions: [
                Region(userId: "alice", x: 0, y: 0, width: 640, height: 360, z: 1),
                Region(userId: "bob", x: 640, y: 0, width: 640, height: 360),
                Region(userId: "carol", x: 0, y: 360, width: 640, height: 360, z: -5),
                Region(userId: "dave", x: 640, y: 360, width: 640, height: 360, z: 1, fit: .stretch),
            ])
        let placements = LayoutEngine.placements(
            for: layout, participants: ["dave", "erin", "alice", "bob"],
            canvasWidth: 1280, canvasHeight: 720)
        #expect(
            placements == [
                Placement(userId: "bob", rect: r(640, 0, 640, 360), z: 0, fit: .cover),
                Placement(userId: "alice", rect: r(0, 0, 640, 360), z: 1, fit: .cover),
                Placement(userId: "dave", rect: r(640, 360, 640, 360), z: 1, fit: .stretch),
            ])
    }

    @Test func customSnapsOddCoordinatesToEvenPixels() {
        let layout = Layout(mode: .custom, regions: [Region(userId: "a", x: 101, y: 51, width: 201, height: 99)])
        let placements = LayoutEngine.placements(for: layout, participants: ["a"], canvasWidth: 1280, canvasHeight: 720)
        // Origin floored to (100, 50); far edges 302 and 150 are already even.
        #expect(placements.map(\.rect) == [r(100, 50, 202, 100)])
    }

    @Test func customClipsToTheCanvasAndDropsInvisibleRegions() {
        let layout = Layout(
            mode: .custom,
            regions: [
                Region(userId: "a", x: -30, y: 600, width: 201, height: 200),
                Region(userId: "b", x: 1280, y: 0, width: 100, height: 100),
                Region(userId: "c", x: 1100, y: -50, width: 500, height: 51),
            ])
        let placements = LayoutEngine.placements(
            for: layout, participants: ["a", "b", "c"], canvasWidth: 1280, canvasHeight: 720)
        // a: x −30…171 → 0…170, y 600…800 → 600…720. b: outside. c: y −50…1 → 0…0 after snapping: dropped.
        #expect(placements.map(\.rect) == [r(0, 600, 170, 120)])
        #expect(placements.map(\.userId) == ["a"])
    }

    @Test func aUserMayHaveSeveralRegions() {
        let layout = Layout(
            mode: .custom,
            regions: [
                Region(userId: "a", x: 0, y: 0, width: 1280, height: 720),
                Region(userId: "a", x: 960, y: 540, width: 320, height: 180, z: 2),
            ])
        let placements = LayoutEngine.placements(for: layout, participants: ["a"], canvasWidth: 1280, canvasHeight: 720)
        #expect(placements.map(\.rect) == [r(0, 0, 1280, 720), r(960, 540, 320, 180)])
    }
}
