import Foundation
import Media
import Testing
@testable import Layout

/// The JSON of labels: a layout's default `label`, a region's own, `"auto"`, `"none"` and the object form.
@Suite("Layout JSON: labels")
struct LabelSpecDecodingTests {
    private func decode(_ json: String) throws(LayoutError) -> Layout { try LayoutDecodingTests.decode(json) }
    private func failure(_ json: String) -> LayoutError? { LayoutDecodingTests.failure(json) }

    private func region(_ label: String) -> String {
        #"{"mode":"custom","regions":[{"userId":"a","x":0,"y":0,"width":2,"height":2,"label":"# + label + "}]}"
    }

    private func sortedJSON(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    @Test func theDocumentedExampleDecodesWithEveryField() throws {
        let layout = try decode(
            region(
                ##"{"text":"安娜 Ann","position":"bottom-left","size":24,"color":"#ffffff","background":"#00000099"}"##))
        #expect(
            layout.regions[0].label
                == LabelSpec(
                    text: "安娜 Ann", position: .bottomLeft, size: 24, color: "#ffffff", background: "#00000099"))
    }

    @Test func autoNoneAndAnObjectWithoutTextAreTheDisplayNameOrNothing() throws {
        #expect(try decode(region(#""auto""#)).regions[0].label == .auto)
        #expect(try decode(region(#""none""#)).regions[0].label == LabelSpec.none)
        let styled = try decode(region(#"{"position":"top","size":40}"#)).regions[0].label
        #expect(styled?.text == nil && styled?.position == .top && styled?.size == 40 && styled?.color == "#ffffff")
        #expect(try decode(region("null")).regions[0].label == nil)
        #expect(try decode(#"{"mode":"grid","label":"auto"}"#).label == .auto)
    }

    @Test func encodingWritesTheDefaultsAndNoneAsAWordAndDecodesBackTheSame() throws {
        let layout = Layout(
            mode: .custom,
            regions: [
                Region(userId: "a", x: 0, y: 0, width: 2, height: 2, label: LabelSpec(text: "Ann", size: 30)),
                Region(userId: "b", x: 2, y: 0, width: 2, height: 2, label: LabelSpec.none),
            ], label: .auto)
        let json = try sortedJSON(layout)
        let defaults = ##""background":"#00000099","color":"#ffffff","position":"bottom-left""##
        #expect(json.contains(#""label":{"# + defaults + #","size":24}"#))
        #expect(json.contains(#""label":"none""#))
        #expect(json.contains(#""label":{"# + defaults + #","size":30,"text":"Ann"}"#))
        #expect(try decode(json) == layout)
    }

    @Test func everyBrokenRuleIsRefusedWithTheLabelsKind() throws {
        let bad = [
            #""big""#, "3", "[]", #"{"text":""}"#, #"{"text":"a\u0007b"}"#,
            #"{"text":""# + String(repeating: "x", count: 65) + #""}"#,
            #"{"text":""# + String(repeating: "😀", count: 65) + #""}"#, #"{"position":"middle"}"#,
            #"{"size":7}"#, #"{"size":129}"#, #"{"color":"white"}"#, ##"{"color":"#fff"}"##,
            ##"{"background":"#1234567"}"##,
        ]
        for label in bad {
            let error = failure(region(label))
            #expect(error?.kind == .invalidLabel, "\(label): \(String(describing: error))")
            #expect(error?.message.hasPrefix("regions[0]") == true, "\(label): \(String(describing: error))")
        }
        #expect(failure(#"{"mode":"grid","label":{"size":200}}"#)?.message.hasPrefix("label: label.size 200") == true)
        // 64 scalars of four bytes each is the most there is room for.
        #expect(try decode(region(#"{"text":""# + String(repeating: "😀", count: 64) + #""}"#)).regions.count == 1)
    }

    @Test func placementsTakeTheRegionsLabelElseTheLayoutsAndKeepNone() {
        let layout = Layout(
            mode: .custom,
            regions: [
                Region(userId: "a", x: 0, y: 0, width: 100, height: 100),
                Region(userId: "b", x: 100, y: 0, width: 100, height: 100, label: LabelSpec(text: "Bee")),
                Region(userId: "c", x: 200, y: 0, width: 100, height: 100, label: LabelSpec.none),
            ], label: .auto)
        let placed = LayoutEngine.placements(
            for: layout, participants: ["a", "b", "c"], canvasWidth: 640, canvasHeight: 360)
        #expect(placed.map(\.label) == [.auto, LabelSpec(text: "Bee"), LabelSpec.none])
        let grid = LayoutEngine.placements(
            for: Layout(mode: .grid, label: LabelSpec(position: .top)), participants: ["a", "b"], canvasWidth: 640,
            canvasHeight: 360)
        #expect(grid.map(\.label) == [LabelSpec(position: .top), LabelSpec(position: .top)])
        #expect(
            LayoutEngine.placements(for: .grid, participants: ["a"], canvasWidth: 640, canvasHeight: 360)[0].label
                == nil)
    }
}

/// A layout carried to another canvas: each region keeps its share of it.
@Suite("Layout refitted to a new canvas")
struct LayoutRefitTests {
    @Test func regionsScaleWithEachSideOfTheCanvasOnEvenPixels() throws {
        let layout = Layout(
            mode: .custom,
            regions: [
                Region(userId: "a", x: 0, y: 0, width: 1280, height: 720, label: .auto),
                Region(userId: "b", x: 944, y: 524, width: 320, height: 180, z: 1),
            ])
        let tall = layout.refitted(fromWidth: 1280, fromHeight: 720, toWidth: 720, toHeight: 1280)
        #expect(
            tall.regions.map(\.rect) == [
                Rect(x: 0, y: 0, width: 720, height: 1280), Rect(x: 532, y: 932, width: 180, height: 320),
            ])
        #expect(tall.regions[0].label == .auto && tall.regions[1].z == 1)
        try tall.validate(canvasWidth: 720, canvasHeight: 1280)
        #expect(layout.refitted(fromWidth: 1280, fromHeight: 720, toWidth: 1280, toHeight: 720) == layout)
        // A sliver never vanishes: at least 2×2.
        let tiny = Layout(mode: .custom, regions: [Region(userId: "a", x: 0, y: 0, width: 2, height: 2)])
        #expect(
            tiny.refitted(fromWidth: 1280, fromHeight: 720, toWidth: 16, toHeight: 16).regions[0].rect
                == Rect(x: 0, y: 0, width: 2, height: 2))
    }
}
