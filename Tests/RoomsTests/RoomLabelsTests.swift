import Media
import Testing
import Layout
@testable import Rooms

/// A room's labels are rendered once per text, style and tile size, then handed out as they are.
@Suite struct RoomLabelsTests {
    @Test func aLabelIsRenderedOncePerTextStyleAndTileSize() throws {
        let labels = RoomLabels()
        let tile = Rect(x: 0, y: 0, width: 640, height: 360)
        let first = try #require(labels.label(.auto, name: "安娜 Ann", rect: tile))
        let again = try #require(labels.label(.auto, name: "安娜 Ann", rect: tile))
        #expect(first === again)
        #expect(labels.renders == 1)
        _ = labels.label(LabelSpec(text: "Bob"), name: "安娜 Ann", rect: tile)
        _ = labels.label(.auto, name: "安娜 Ann", rect: Rect(x: 0, y: 0, width: 320, height: 180))
        _ = labels.label(LabelSpec(size: 30), name: "安娜 Ann", rect: tile)
        #expect(labels.renders == 4)
        #expect(labels.label(LabelSpec.none, name: "安娜 Ann", rect: tile) == nil)
        #expect(labels.label(nil, name: "安娜 Ann", rect: tile) == nil)
    }

    @Test func aCardShowsTheLabelsTextElseTheNameAtAnEighthOfTheTilesHeight() throws {
        let labels = RoomLabels()
        let tile = Rect(x: 0, y: 0, width: 640, height: 360)
        let card = try #require(labels.card(nil, name: "Ann", rect: tile))
        #expect(card.position == .center)
        // 45 px type: taller than a 24 px label's 44 px box, on no box (alpha 0 at the corner).
        #expect(card.height > 44)
        #expect(card.alpha[0] == 0)
        let named = try #require(labels.card(LabelSpec(text: "ANN LEE"), name: "Ann", rect: tile))
        #expect(named.width > card.width)
        #expect(labels.card(LabelSpec.none, name: "Ann", rect: tile) == nil)
    }
}
