import Foundation
import Testing
import CohostClient

/// The request bodies `cohost room create` and `cohost room layout` build from their flags.
@Suite struct RequestBodyTests {
    static func object(_ data: Data) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test func flagsAloneMakeTheCreateBody() throws {
        var fields = RoomCreateBody()
        fields.name = "show"
        fields.canvas = CanvasSize(width: 640, height: 360)
        fields.fps = 25
        fields.preset = "low2"
        fields.outputs = ["rtmp://127.0.0.1/live/a", "file:///tmp/a.flv"]
        let json = String(decoding: try fields.json(), as: UTF8.self)
        #expect(
            json
                == #"{"canvas":{"fps":25,"height":360,"width":640},"name":"show","outputs":[{"url":"rtmp:\/\/127.0.0.1\/live\/a"},{"url":"file:\/\/\/tmp\/a.flv"}],"video":{"preset":"low2"}}"#
        )
    }

    @Test func flagsReplaceTheirFieldsInABodyAndOutputsAreAppended() throws {
        let base = Data(
            ##"{"name":"template","canvas":{"width":1280,"height":720,"background":"#202040"},"outputs":[{"url":"rtmp://h/a"}],"maxParticipants":4}"##
                .utf8)
        var fields = RoomCreateBody()
        fields.name = "copy"
        fields.fps = 10
        fields.audioOnly = true
        fields.outputs = ["rtmp://h/b"]
        let room = try Self.object(try fields.json(over: base))
        #expect(room["name"] as? String == "copy")
        #expect(room["maxParticipants"] as? Int == 4)
        #expect(room["audioOnly"] as? Bool == true)
        let canvas = try #require(room["canvas"] as? [String: Any])
        #expect(
            canvas["width"] as? Int == 1280 && canvas["fps"] as? Int == 10
                && canvas["background"] as? String == "#202040")
        let urls = (room["outputs"] as? [[String: Any]])?.compactMap { $0["url"] as? String }
        #expect(urls == ["rtmp://h/a", "rtmp://h/b"])
    }

    @Test func aBodyThatIsNotAnObjectCannotTakeFlags() {
        var fields = RoomCreateBody()
        fields.name = "x"
        #expect(throws: BodyError.self) { try fields.json(over: Data("[1,2]".utf8)) }
        #expect(!fields.isEmpty && RoomCreateBody().isEmpty)
    }

    @Test func layoutFlagsKeepTheRegionsInTheirOrder() throws {
        let layout = LayoutBody(
            mode: "custom",
            regions: [
                try #require(RegionSpec("anchor@0,0,1280x720")), try #require(RegionSpec("guest@-8,460,360x220")),
            ])
        #expect(
            String(decoding: layout.json(), as: UTF8.self)
                == #"{"mode":"custom","regions":[{"height":720,"userId":"anchor","width":1280,"x":0,"y":0},{"height":220,"userId":"guest","width":360,"x":-8,"y":460}]}"#
        )
        #expect(
            String(decoding: LayoutBody(mode: "pip", anchor: "alice").json(), as: UTF8.self)
                == #"{"anchor":"alice","mode":"pip","regions":[]}"#)
    }

    @Test(arguments: [
        "guest", "@0,0,10x10", "guest@0,0", "guest@0,0,10", "guest@a,0,10x10", "guest@0,0,0x10", "g@0,0,10x10,1",
    ])
    func aMalformedRegionIsRefused(text: String) {
        #expect(RegionSpec(text) == nil)
    }

    @Test func canvasSizesReadWidthByHeight() {
        #expect(CanvasSize("1280x720") == CanvasSize(width: 1280, height: 720))
        #expect(CanvasSize("640X360") == CanvasSize(width: 640, height: 360))
        #expect(CanvasSize("1280") == nil && CanvasSize("x720") == nil && CanvasSize("-2x4") == nil)
    }
}
