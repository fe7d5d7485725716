import Foundation
import Testing
import CohostAPI
import CohostClient

/// What `cohost`'s API subcommands print, and where they send requests.
@Suite struct TableAndURLTests {
    @Test func columnsAlignAndNoLineEndsInSpaces() {
        var table = Table(["NAME", "PARTICIPANTS", "LAYOUT"])
        table.add(["show", "2", "custom"])
        table.add(["a-much-longer-name", "10", "grid"])
        #expect(
            table.render() == """
                NAME                PARTICIPANTS  LAYOUT
                show                2             custom
                a-much-longer-name  10            grid
                """)
    }

    @Test func aRoomListShowsCanvasOrAudioOnly() throws {
        let json = """
            {"rooms":[\(Self.room(name: "talk", audioOnly: true)),\(Self.room(name: "show", audioOnly: false))]}
            """
        let rooms = try RoomList.decoded(from: Data(json.utf8)).rooms
        #expect(
            RoomText.list(rooms) == """
                NAME  PARTICIPANTS  OUTPUTS  CANVAS      LAYOUT
                talk  0             0        audio only  grid
                show  0             0        640x360@25  grid
                """)
    }

    @Test func refusalsCarryTheAPIsCodeOrTheStatus() {
        let body = Data(#"{"error":{"code":"room_full","message":"room 'r' has 2 participants, its maximum"}}"#.utf8)
        let refusal = ClientError.refusal(status: 409, body: body)
        #expect(refusal.description == "room_full: room 'r' has 2 participants, its maximum" && refusal.exitCode == 1)
        let proxy = ClientError.refusal(status: 502, body: Data("<html>Bad Gateway</html>\nmore".utf8))
        #expect(proxy.description == "http_502: <html>Bad Gateway</html>")
        #expect(ClientError.unreachable(url: "http://h:1", reason: "connection refused").exitCode == 3)
    }

    @Test func serverURLsResolvePathsSocketsAndLinks() throws {
        let server = try #require(ServerURL("https://cohost.example.com/api/"))
        #expect(server.url("/v1/rooms")?.absoluteString == "https://cohost.example.com/api/v1/rooms")
        #expect(server.webSocket("/v1/rooms/r/events") == "wss://cohost.example.com/api/v1/rooms/r/events")
        #expect(server.absolute(link: "/join/r#token=t") == "https://cohost.example.com/api/join/r#token=t")
        #expect(ServerURL("http://127.0.0.1:7880")?.webSocket("/x") == "ws://127.0.0.1:7880/x")
        #expect(ServerURL("127.0.0.1:7880") == nil && ServerURL("ftp://h") == nil && ServerURL("http://") == nil)
        #expect(ServerURL.segment("a b/c") == "a%20b%2Fc" && ServerURL.segment("show_1.x-y") == "show_1.x-y")
    }

    /// A room as the server answers it (every field protocol/openapi.yaml requires).
    static func room(name: String, audioOnly: Bool) -> String {
        """
        {"name":"\(name)","audioOnly":\(audioOnly),"maxParticipants":16,\
        "canvas":{"width":640,"height":360,"fps":25,"background":"#000000","placeholder":"#202020","holdMs":1000},\
        "audio":{"bitrate":128,"channels":2},"layout":{"mode":"grid","regions":[]},"participants":[],"outputs":[],\
        "statusIntervalMs":3000,"maxIngestBitrate":2500,"maxVideoSize":{"width":1920,"height":1080},\
        "returnVideo":"none"}
        """
    }
}
