import Foundation
import Testing
@testable import Layout

@Suite("Layout JSON")
struct LayoutDecodingTests {
    static func decode(_ json: String) throws(LayoutError) -> Layout {
        try Layout.decode(from: Data(json.utf8))
    }

    /// The error decoding `json` throws, nil when it decodes.
    static func failure(_ json: String) -> LayoutError? {
        do {
            _ = try decode(json)
            return nil
        } catch {
            return error
        }
    }

    private func decode(_ json: String) throws(LayoutError) -> Layout { try Self.decode(json) }
    private func failure(_ json: String) -> LayoutError? { Self.failure(json) }

    @Test func gridWithoutRegionsDecodesToTheGridLayout() throws {
        #expect(try decode(#"{"mode":"grid"}"#) == .grid)
    }

    @Test func nullRegionsAreRefusedAsTheContractSaysAnArray() {
        let error = failure(#"{"mode":"grid","regions":null}"#)
        #expect(error?.kind == .malformed)
        #expect(error?.message == "regions must be an array (leave it out for none), not null")
    }

    @Test func missingZAndFitDefaultToZeroAndCover() throws {
        let layout = try decode(
            #"{"mode":"custom","regions":[{"userId":"alice","x":10,"y":20,"width":640,"height":360}]}"#)
        #expect(
            layout
                == Layout(
                    mode: .custom,
                    regions: [
                        Region(userId: "alice", x: 10, y: 20, width: 640, height: 360, z: 0, fit: .cover)
                    ]))
    }

    @Test func everyFieldIsRead() throws {
        let json =
            #"{"mode":"custom","regions":[{"userId":"a.B-9_","x":-4,"y":16384,"width":2,"height":16384,"z":-3,"fit":"contain"},"#
            + #"{"userId":"bob","x":0,"y":0,"width":8,"height":8,"z":7,"fit":"stretch","extra":true}]}"#
        let layout = try decode(json)
        #expect(
            layout.regions == [
                Region(userId: "a.B-9_", x: -4, y: 16384, width: 2, height: 16384, z: -3, fit: .contain),
                Region(userId: "bob", x: 0, y: 0, width: 8, height: 8, z: 7, fit: .stretch),
            ])
    }

    @Test func encodingRoundTrips() throws {
        let layout = Layout(
            mode: .custom, regions: [Region(userId: "alice", x: 2, y: 4, width: 6, height: 8, z: 1, fit: .stretch)])
        let data = try JSONEncoder().encode(layout)
        #expect(try Layout.decode(from: data) == layout)
    }

    @Test func aRegionShowsTheCameraUnlessItNamesTheScreenAndOnlyAScreenIsWrittenBack() throws {
        let layout = try decode(
            #"{"mode":"custom","regions":[{"userId":"ann","x":0,"y":0,"width":8,"height":8,"source":"screen"},"#
                + #"{"userId":"ann","x":8,"y":0,"width":8,"height":8,"source":null}]}"#)
        #expect(layout.regions.map(\.source) == [.screen, .camera])
        let written = String(decoding: try JSONEncoder().encode(layout), as: UTF8.self)
        #expect(written.components(separatedBy: #""source":"screen""#).count == 2)
        #expect(!written.contains(#""source":"camera""#))
        let error = failure(
            #"{"mode":"custom","regions":[{"userId":"a","x":0,"y":0,"width":2,"height":2,"source":"mic"}]}"#)
        #expect(error == LayoutError(.unknownSource, #"regions[0]: unknown source "mic" (expected camera or screen)"#))
    }

    @Test func unknownModeIsRefused() {
        #expect(
            failure(#"{"mode":"spotlight"}"#)
                == LayoutError(.unknownMode, #"unknown mode "spotlight" (expected custom, grid or pip)"#))
    }

    @Test func unknownFitIsRefused() {
        let error = failure(
            #"{"mode":"custom","regions":[{"userId":"a","x":0,"y":0,"width":2,"height":2,"fit":"fill"}]}"#)
        #expect(
            error == LayoutError(.unknownFit, #"regions[0]: unknown fit "fill" (expected cover, contain or stretch)"#))
    }

    @Test func zeroOrNegativeSizeIsRefused() {
        let zero = failure(#"{"mode":"custom","regions":[{"userId":"a","x":0,"y":0,"width":0,"height":360}]}"#)
        #expect(zero == LayoutError(.invalidSize, "regions[0]: size 0x360 must be positive"))
        let negative = failure(
            #"{"mode":"custom","regions":[{"userId":"a","x":0,"y":0,"width":2,"height":2},"#
                + #"{"userId":"b","x":0,"y":0,"width":640,"height":-1}]}"#)
        #expect(negative == LayoutError(.invalidSize, "regions[1]: size 640x-1 must be positive"))
    }

    @Test func moreThanSixteenRegionsAreRefused() throws {
        let region = #"{"userId":"a","x":0,"y":0,"width":2,"height":2}"#
        let sixteen =
            #"{"mode":"custom","regions":["# + Array(repeating: region, count: 16).joined(separator: ",") + "]}"
        #expect(try decode(sixteen).regions.count == 16)
        let seventeen =
            #"{"mode":"custom","regions":["# + Array(repeating: region, count: 17).joined(separator: ",") + "]}"
        #expect(failure(seventeen) == LayoutError(.tooManyRegions, "more than 16 regions"))
    }

    @Test func coordinatesBeyondTheLimitAreRefused() {
        #expect(
            failure(#"{"mode":"custom","regions":[{"userId":"a","x":16385,"y":0,"width":2,"height":2}]}"#)
                == LayoutError(.coordinateOutOfRange, "regions[0]: x 16385 is beyond ±16384"))
        #expect(
            failure(#"{"mode":"custom","regions":[{"userId":"a","x":0,"y":-16385,"width":2,"height":2}]}"#)
                == LayoutError(.coordinateOutOfRange, "regions[0]: y -16385 is beyond ±16384"))
        #expect(
            failure(#"{"mode":"custom","regions":[{"userId":"a","x":0,"y":0,"width":99999,"height":2}]}"#)
                == LayoutError(.coordinateOutOfRange, "regions[0]: width 99999 is beyond ±16384"))
    }

    @Test func malformedUserIdsAreRefused() {
        #expect(
            failure(#"{"mode":"custom","regions":[{"userId":"bad id","x":0,"y":0,"width":2,"height":2}]}"#)
                == LayoutError(.invalidUserId, #"regions[0]: userId "bad id" must match [A-Za-z0-9_.-]{1,64}"#))
        #expect(
            failure(#"{"mode":"custom","regions":[{"userId":"","x":0,"y":0,"width":2,"height":2}]}"#)?.kind
                == .invalidUserId)
        #expect(
            failure(#"{"mode":"custom","regions":[{"userId":"é","x":0,"y":0,"width":2,"height":2}]}"#)?.kind
                == .invalidUserId)
        let long = String(repeating: "a", count: 65)
        let error = failure(
            #"{"mode":"custom","regions":[{"userId":""# + long + #"","x":0,"y":0,"width":2,"height":2}]}"#)
        #expect(
            error
                == LayoutError(
                    .invalidUserId,
                    "regions[0]: userId \"\(String(repeating: "a", count: 64))…\" must match [A-Za-z0-9_.-]{1,64}"))
        let ok = String(repeating: "a", count: 64)
        #expect(
            failure(#"{"mode":"custom","regions":[{"userId":""# + ok + #"","x":0,"y":0,"width":2,"height":2}]}"#) == nil
        )
    }

    @Test func syntaxAndTypeErrorsBecomeMalformed() {
        #expect(failure("not json") == LayoutError(.malformed, "not valid layout JSON"))
        #expect(failure("{}") == LayoutError(.malformed, "missing mode"))
        #expect(
            failure(#"{"mode":"custom","regions":[{"userId":"a","x":"0","y":0,"width":2,"height":2}]}"#)
                == LayoutError(.malformed, "regions[0].x must be an integer"))
        #expect(
            failure(#"{"mode":"custom","regions":[{"userId":"a","x":0,"y":0,"width":2}]}"#)
                == LayoutError(.malformed, "missing regions[0].height"))
        #expect(failure(#"{"mode":"custom","regions":{}}"#)?.kind == .malformed)
    }

    @Test func validatePassesALayoutThatFitsTheCanvas() throws {
        let layout = Layout(
            mode: .custom,
            regions: [
                Region(userId: "alice", x: 0, y: 0, width: 1280, height: 720),
                Region(userId: "bob", x: 1200, y: 640, width: 320, height: 180, z: 1),  // partly outside: clipped, fine
            ])
        try layout.validate(canvasWidth: 1280, canvasHeight: 720)
        try Layout.grid.validate(canvasWidth: 1280, canvasHeight: 720)
    }

    @Test func validateRefusesRegionsWithNoVisiblePixels() {
        let outside = Layout(
            mode: .custom,
            regions: [
                Region(userId: "alice", x: 0, y: 0, width: 640, height: 360),
                Region(userId: "bob", x: 1280, y: 0, width: 320, height: 180),
            ])
        #expect(
            throws: LayoutError(
                .outsideCanvas,
                "regions[1] (bob) at 320x180+1280+0 has no visible pixels on the "
                    + "1280x720 canvas once clipped and snapped to even pixels")
        ) {
            try outside.validate(canvasWidth: 1280, canvasHeight: 720)
        }
        // One visible row (y 0..<1) snaps to nothing.
        let sliver = Layout(mode: .custom, regions: [Region(userId: "a", x: 0, y: -50, width: 100, height: 51)])
        #expect(throws: LayoutError.self) { try sliver.validate(canvasWidth: 1280, canvasHeight: 720) }
    }

    @Test func validateRechecksLayoutsBuiltInCode() {
        let many = Layout(
            mode: .custom, regions: Array(repeating: Region(userId: "a", x: 0, y: 0, width: 2, height: 2), count: 17))
        #expect(throws: LayoutError(.tooManyRegions, "17 regions, at most 16 allowed")) {
            try many.validate(canvasWidth: 1280, canvasHeight: 720)
        }
        let badId = Layout(mode: .custom, regions: [Region(userId: "a/b", x: 0, y: 0, width: 2, height: 2)])
        #expect(throws: LayoutError(.invalidUserId, #"regions[0]: userId "a/b" must match [A-Za-z0-9_.-]{1,64}"#)) {
            try badId.validate(canvasWidth: 1280, canvasHeight: 720)
        }
        let bigZ = Layout(mode: .custom, regions: [Region(userId: "a", x: 0, y: 0, width: 2, height: 2, z: 20_000)])
        #expect(throws: LayoutError(.coordinateOutOfRange, "regions[0]: z 20000 is beyond ±16384")) {
            try bigZ.validate(canvasWidth: 1280, canvasHeight: 720)
        }
        #expect(throws: LayoutError(.invalidCanvas, "canvas 0x720 must be 2…16384 pixels each way")) {
            try Layout.grid.validate(canvasWidth: 0, canvasHeight: 720)
        }
    }
}
