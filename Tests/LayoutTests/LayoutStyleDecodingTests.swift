import Foundation
import Media
import Testing
@testable import Layout

/// The JSON added for pip and tile styling: `mode: "pip"`, `anchor`, a region's `alpha` and `border`.
@Suite("Layout JSON: pip, anchor, alpha, border")
struct LayoutStyleDecodingTests {
    private func decode(_ json: String) throws(LayoutError) -> Layout { try LayoutDecodingTests.decode(json) }
    private func failure(_ json: String) -> LayoutError? { LayoutDecodingTests.failure(json) }

    /// One region for user "a" with `extra` spliced in after its required keys.
    private func region(_ extra: String) -> String {
        #"{"mode":"custom","regions":[{"userId":"a","x":0,"y":0,"width":2,"height":2"# + extra + "}]}"
    }

    private func sortedJSON(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    @Test func pipModeAndAnchorDecode() throws {
        #expect(try decode(#"{"mode":"pip"}"#) == .pip)
        #expect(try decode(#"{"mode":"pip","anchor":"host-1"}"#) == Layout(mode: .pip, anchor: "host-1"))
        #expect(try decode(#"{"mode":"pip","anchor":null}"#) == .pip)
    }

    @Test func anchorAndRegionsAreKeptInEveryMode() throws {
        let pip = try decode(
            #"{"mode":"pip","anchor":"bob","regions":[{"userId":"a","x":0,"y":0,"width":2,"height":2}]}"#)
        #expect(
            pip == Layout(mode: .pip, regions: [Region(userId: "a", x: 0, y: 0, width: 2, height: 2)], anchor: "bob"))
        try pip.validate(canvasWidth: 1280, canvasHeight: 720)
        let grid = try decode(#"{"mode":"grid","anchor":"bob"}"#)
        #expect(grid == Layout(mode: .grid, anchor: "bob"))
        try grid.validate(canvasWidth: 1280, canvasHeight: 720)
        #expect(try decode(#"{"mode":"custom","anchor":"bob","regions":[]}"#).anchor == "bob")
    }

    @Test func malformedAnchorsAreRefused() {
        #expect(
            failure(#"{"mode":"pip","anchor":"bad id"}"#)
                == LayoutError(.invalidAnchor, #"anchor "bad id" must match [A-Za-z0-9_.-]{1,64}"#))
        #expect(
            failure(#"{"mode":"pip","anchor":""}"#)
                == LayoutError(.invalidAnchor, #"anchor "" must match [A-Za-z0-9_.-]{1,64}"#))
        let long = String(repeating: "x", count: 100)
        #expect(
            failure(#"{"mode":"pip","anchor":""# + long + #""}"#)
                == LayoutError(
                    .invalidAnchor, "anchor \"\(String(repeating: "x", count: 64))…\" must match [A-Za-z0-9_.-]{1,64}"))
        #expect(failure(#"{"mode":"pip","anchor":7}"#) == LayoutError(.malformed, "anchor must be a string"))
        #expect(throws: LayoutError(.invalidAnchor, #"anchor "a/b" must match [A-Za-z0-9_.-]{1,64}"#)) {
            try Layout(mode: .pip, anchor: "a/b").validate(canvasWidth: 1280, canvasHeight: 720)
        }
    }

    @Test func alphaAndBorderDecode() throws {
        let layout = try decode(region(##","alpha":0.5,"border":{"color":"#FF0000","width":4}"##))
        #expect(
            layout.regions == [
                Region(
                    userId: "a", x: 0, y: 0, width: 2, height: 2, alpha: 0.5,
                    border: RegionBorder(color: "#FF0000", width: 4))
            ])
        // Pure red in BT.601 limited range.
        #expect(layout.regions[0].tileBorder == TileBorder(color: YUVColor(y: 81, u: 90, v: 240), width: 4))
        #expect(try decode(region(#","alpha":0"#)).regions[0].alpha == 0)
        #expect(try decode(region(#","alpha":1"#)).regions[0].alpha == 1)
        #expect(
            try decode(region(#","border":{"color":"00ff00","width":64}"#)).regions[0].border
                == RegionBorder(color: "00ff00", width: 64))
    }

    @Test func alphaAndBorderDefaultToOpaqueAndNone() throws {
        let r = try decode(region("")).regions[0]
        #expect(r.alpha == 1)
        #expect(r.border == nil)
        #expect(r.tileBorder == nil)
        #expect(try decode(region(#","alpha":null,"border":null"#)).regions[0] == r)
    }

    @Test func alphaOutsideZeroToOneIsRefused() {
        #expect(
            failure(region(#","alpha":1.5"#))
                == LayoutError(.invalidAlpha, "regions[0]: alpha 1.5 must be a number from 0 to 1"))
        #expect(
            failure(region(#","alpha":-0.25"#))
                == LayoutError(.invalidAlpha, "regions[0]: alpha -0.25 must be a number from 0 to 1"))
        #expect(failure(region(#","alpha":"0.5""#)) == LayoutError(.malformed, "regions[0].alpha must be a number"))
        // Non-finite values cannot come from JSON (an overflowing number is refused as such), only from code.
        #expect(failure(region(#","alpha":1e400"#)) == LayoutError(.malformed, "not valid layout JSON"))
        for bad in [Double.nan, .infinity, -.infinity] {
            let layout = Layout(
                mode: .custom, regions: [Region(userId: "a", x: 0, y: 0, width: 2, height: 2, alpha: bad)])
            #expect(throws: LayoutError(.invalidAlpha, "regions[0]: alpha \(bad) must be a number from 0 to 1")) {
                try layout.validate(canvasWidth: 1280, canvasHeight: 720)
            }
        }
    }

    @Test func borderWidthMustBeEvenAndTwoToSixtyFour() {
        for width in [0, 1, 3, 65, 66, -2] {
            #expect(
                failure(region(##","border":{"color":"#000000","width":"## + "\(width)}"))
                    == LayoutError(.invalidBorderWidth, "regions[0]: border.width \(width) must be even and 2…64"))
        }
        #expect(failure(region(##","border":{"color":"#000000","width":2}"##)) == nil)
        #expect(
            failure(region(##","border":{"color":"#000000"}"##))
                == LayoutError(.malformed, "missing regions[0].border.width"))
        // Foundation reports a fraction where an integer belongs as corrupt data, without a path.
        #expect(
            failure(region(##","border":{"color":"#000000","width":2.5}"##))
                == LayoutError(.malformed, "not valid layout JSON"))
        #expect(
            failure(region(##","border":{"color":"#000000","width":"2"}"##))
                == LayoutError(.malformed, "regions[0].border.width must be an integer"))
    }

    @Test func borderColorMustBeHex() {
        #expect(
            failure(region(#","border":{"color":"red","width":2}"#))
                == LayoutError(.invalidBorderColor, #"regions[0]: border.color "red" must be #RRGGBB"#))
        #expect(failure(region(##","border":{"color":"#12345","width":2}"##))?.kind == .invalidBorderColor)
        #expect(failure(region(##","border":{"color":"#12345G","width":2}"##))?.kind == .invalidBorderColor)
        #expect(
            failure(region(#","border":{"width":2}"#)) == LayoutError(.malformed, "missing regions[0].border.color"))
        #expect(failure(region(##","border":"#FF0000""##))?.kind == .malformed)
        let second =
            #"{"mode":"custom","regions":[{"userId":"a","x":0,"y":0,"width":2,"height":2},"#
            + ##"{"userId":"b","x":0,"y":0,"width":2,"height":2,"border":{"color":"#FFFFFFF","width":2}}]}"##
        #expect(
            failure(second)
                == LayoutError(.invalidBorderColor, ##"regions[1]: border.color "#FFFFFFF" must be #RRGGBB"##))
        let built = Layout(
            mode: .custom,
            regions: [
                Region(
                    userId: "a", x: 0, y: 0, width: 2, height: 2,
                    border: RegionBorder(color: "#GG0000", width: 2))
            ])
        #expect(throws: LayoutError(.invalidBorderColor, ##"regions[0]: border.color "#GG0000" must be #RRGGBB"##)) {
            try built.validate(canvasWidth: 1280, canvasHeight: 720)
        }
    }

    @Test func encodingWritesAlphaAlwaysAndBorderOnlyWhenSet() throws {
        let plain = Region(userId: "a", x: 0, y: 0, width: 2, height: 2)
        #expect(
            try sortedJSON(plain) == #"{"alpha":1,"fit":"cover","height":2,"userId":"a","width":2,"x":0,"y":0,"z":0}"#)
        let styled = Region(
            userId: "a", x: 0, y: 0, width: 2, height: 2, alpha: 0.5, border: RegionBorder(color: "#00ff7F", width: 6))
        #expect(
            try sortedJSON(styled) == ##"{"alpha":0.5,"border":{"color":"#00ff7F","width":6},"fit":"cover","##
                + #""height":2,"userId":"a","width":2,"x":0,"y":0,"z":0}"#)
        #expect(try sortedJSON(Layout.pip) == #"{"mode":"pip","regions":[]}"#)
        #expect(try sortedJSON(Layout(mode: .grid, anchor: "bob")) == #"{"anchor":"bob","mode":"grid","regions":[]}"#)
    }

    @Test func everyNewFieldRoundTrips() throws {
        let layout = Layout(
            mode: .pip,
            regions: [
                Region(
                    userId: "a", x: -4, y: 8, width: 640, height: 360, z: 2, fit: .contain, alpha: 0.25,
                    border: RegionBorder(color: "abcdef", width: 2)),
                Region(userId: "b", x: 0, y: 0, width: 2, height: 2, alpha: 0),
            ], anchor: "b")
        #expect(try Layout.decode(from: JSONEncoder().encode(layout)) == layout)
        let json =
            #"{"mode":"custom","anchor":"z","regions":[{"userId":"a","x":0,"y":0,"width":2,"height":2,"#
            + ##""alpha":0.75,"border":{"color":"#FFFFFF","width":8}}]}"##
        let decoded = try decode(json)
        #expect(try Layout.decode(from: JSONEncoder().encode(decoded)) == decoded)
        #expect(
            try sortedJSON(decoded) == #"{"anchor":"z","mode":"custom","regions":[{"alpha":0.75,"#
                + ##""border":{"color":"#FFFFFF","width":8},"fit":"cover","height":2,"userId":"a","width":2,"x":0,"y":0,"z":0}]}"##
        )
    }
}
