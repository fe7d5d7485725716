import Foundation
import Testing
import TestSupport

extension EndToEnd.CommandLineTests {
    /// `cohost load-test` against a real server: its rooms are made, filled with senders the server decodes, answered
    /// with the return path, read back and closed.
    @Test func loadTestFillsRoomsReportsTheServersViewAndClosesThem() throws {
        let s = try Self.server()
        let run = try Self.cohost(
            s,
            [
                "load-test", "--rooms", "2", "--participants", "2", "--seconds", "3", "--receive", "--video", "320x180",
                "--fps", "15", "--kbps", "300", "--json",
            ])
        #expect(run.status == 0, "\(run.stderr)")
        let report = try #require(run.json as? [String: Any], "\(run.stdout)")
        let rooms = try #require(report["rooms"] as? [[String: Any]])
        #expect(rooms.map { $0["name"] as? String } == ["load-1", "load-2"])
        #expect(report["participants"] as? Int == 4 && report["videoFps"] as? Int == 15)
        for room in rooms {
            #expect(room["participants"] as? Int == 2)
            // Both senders decoded on the server (at what rate is the load's measurement, held by `make bench`: this
            // suite runs beside schemathesis and the WebRTC suites on a busy machine); each got the other's voice and
            // the view.
            #expect((room["serverVideoFpsMin"] as? Int ?? 0) >= 1, "\(room)")
            #expect((room["serverAudioKbps"] as? Int ?? 0) > 0, "\(room)")
            #expect((room["returnAudioPacketsPerSecond"] as? Double ?? 0) > 20, "\(room)")
            #expect((room["returnVideoFps"] as? Double ?? 0) > 1, "\(room)")
            #expect((room["sentPacketsPerSecond"] as? Double ?? 0) > 60, "\(room)")
            // Whether the server kept real time is the load's measurement, reported here (this suite runs beside
            // others on a busy machine; `make bench` holds the target).
            #expect(room["serverFramesDropped"] is Int && room["realTime"] is Bool, "\(room)")
        }
        #expect(report["clockSkippedTicks"] is Int && report["udpDropped"] is Int, "\(report)")
        #expect(run.stderr.contains("load-1: 2 joined") && run.stderr.contains("holding 4 participants for 3 s"))
        let left = try Self.cohost(s, ["room", "list", "--json"])
        #expect((left.json as? [String: Any])?["rooms"] as? [Any] != nil)
        #expect(((left.json as? [String: Any])?["rooms"] as? [Any])?.isEmpty == true, "\(left.stdout)")

        let table = try Self.cohost(s, ["load-test", "--audio-only", "--participants", "3", "--seconds", "2"])
        #expect(table.status == 0, "\(table.stderr)")
        let row = try #require(table.rows.first { $0.first == "load-1" }, "\(table.stdout)")
        #expect(row[1] == "3" && row[4] == "-" && row.last == "yes", "\(table.stdout)")
        #expect(table.stdout.contains("3 participants in 1 rooms held"))
    }

    @Test func loadTestRefusesARoomThatExists() throws {
        let s = try Self.server()
        #expect(try Self.cohost(s, ["room", "create", "mine-1", "--audio-only"]).status == 0)
        let run = try Self.cohost(s, ["load-test", "--prefix", "mine", "--seconds", "1"])
        #expect(run.status == 1)
        #expect(run.stderr.hasSuffix("error: room mine-1 exists already: close it, or give another --prefix\n"))
        // The room that was there stays.
        #expect(try Self.cohost(s, ["room", "show", "mine-1"]).status == 0)
        let usage = try Self.cohost(s, ["load-test", "--participants", "0"])
        #expect(usage.status == 2 && usage.stderr.contains("--participants must be 1…64"))
    }
}
