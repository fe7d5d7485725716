import Foundation
import Testing
import Publishing
@testable import Rooms

@Suite struct RoomConfigTests {
    func decode(_ json: String) throws -> RoomConfigRequest {
        try JSONDecoder().decode(RoomConfigRequest.self, from: Data(json.utf8))
    }

    @Test func emptyFieldsTakeTheDefaults() throws {
        let c = try decode(#"{"name":"r1"}"#).resolve()
        #expect(c == RoomConfig.defaults(name: "r1"))
        #expect(c.h264Config.keyintFrames == 60)
    }

    @Test func aPresetSetsSizeFpsBitrateAndProfile() throws {
        let c = try decode(#"{"name":"r1","video":{"preset":"medium2"},"audio":{"preset":"high1"}}"#).resolve()
        #expect(c.canvas.width == 368 && c.canvas.height == 640 && c.canvas.fps == 24)
        #expect(c.video.bitrateKbps == 768 && c.video.profile == .high)
        #expect(c.audio.bitrateKbps == 64)
    }

    @Test func eachLimitIsNamedInItsRefusal() throws {
        let cases: [(String, String)] = [
            (#"{"name":"r1","canvas":{"width":99999}}"#, "canvas.width must be within 16...3840, got 99999"),
            (#"{"name":"r1","canvas":{"width":641}}"#, "canvas.width and canvas.height must be even (I420)"),
            (#"{"name":"r1","canvas":{"fps":0}}"#, "canvas.fps must be within 1...60, got 0"),
            (#"{"name":"r1","video":{"bitrate":1}}"#, "video.bitrate (kbps) must be within 64...20000, got 1"),
            (#"{"name":"r1","audio":{"channels":6}}"#, "audio.channels must be 1 or 2"),
            (#"{"name":"r1","canvas":{"background":"red"}}"#, "canvas.background must be #RRGGBB"),
            (#"{"name":"bad name"}"#, "room name must match [A-Za-z0-9_.-]{1,64}"),
            (
                #"{"name":"r1","video":{"preset":"ultra"}}"#,
                "unknown video preset 'ultra'; known: high1, high2, high3, low1, low2, low3, medium1, medium2, medium3"
            ),
        ]
        for (json, message) in cases {
            let request = try decode(json)
            do {
                _ = try request.resolve()
                Issue.record("accepted \(json)")
            } catch {
                #expect(error.kind == .invalid && error.message == message)
            }
        }
    }

    @Test func theRoomViewDefaultsToTheCanvasAspectAtSixHundredFortyAndCanBeTurnedOff() throws {
        #expect(
            try decode(#"{"name":"r1"}"#).resolve().returnVideo == .init(width: 640, height: 360, fps: 15, bitrate: 500)
        )
        let portrait = try decode(#"{"name":"r1","video":{"preset":"high1"}}"#).resolve()
        #expect(portrait.returnVideo == .init(width: 360, height: 640, fps: 15, bitrate: 500))
        let chosen = try decode(#"{"name":"r1","returnVideo":{"width":320,"height":180,"bitrate":300}}"#).resolve()
        #expect(chosen.returnVideo == .init(width: 320, height: 180, fps: 15, bitrate: 300))
        #expect(try decode(#"{"name":"r1","returnVideo":"none"}"#).resolve().returnVideo == nil)
        #expect(try decode(#"{"name":"r1","audioOnly":true}"#).resolve().returnVideo == nil)
        // A canvas makes an audio-only room a voice room with a picture (still no room view); without one it has none.
        let cards = try decode(#"{"name":"r1","audioOnly":true,"canvas":{"fps":10}}"#).resolve()
        #expect(cards.voicePicture && cards.hasPicture && cards.returnVideo == nil && cards.canvas.fps == 10)
        #expect(try !decode(#"{"name":"r1","audioOnly":true}"#).resolve().hasPicture)
        #expect(try !decode(#"{"name":"r1","canvas":{"fps":10}}"#).resolve().voicePicture)
        // A canvas of extreme aspect: the shorter side of the default stays at the least allowed, 64.
        let tall = try decode(#"{"name":"r1","canvas":{"width":16,"height":2160}}"#).resolve()
        #expect(tall.returnVideo == .init(width: 64, height: 640, fps: 15, bitrate: 500))
        #expect(throws: (any Error).self) { try decode(#"{"name":"r1","returnVideo":"all"}"#) }
        let refusals: [(String, String)] = [
            (#"{"width":30}"#, "returnVideo.width must be within 64...1920, got 30"),
            (#"{"width":321}"#, "returnVideo.width and returnVideo.height must be even (I420)"),
            (#"{"width":1920,"height":1920}"#, "returnVideo must be at most 2073600 pixels (1920×1080)"),
            (#"{"fps":31}"#, "returnVideo.fps (at most canvas.fps) must be within 1...30, got 31"),
            (#"{"bitrate":50}"#, "returnVideo.bitrate (kbps) must be within 100...4000, got 50"),
        ]
        for (view, message) in refusals {
            let request = try decode(#"{"name":"r1","returnVideo":\#(view)}"#)
            do {
                _ = try request.resolve()
                Issue.record("accepted \(view)")
            } catch {
                #expect(error.kind == .invalid && error.message == message)
            }
            // Audio-only rooms send no room view, but a bad one is refused there too.
            let audioOnly = try decode(#"{"name":"r1","audioOnly":true,"returnVideo":\#(view)}"#)
            #expect(throws: RoomError.badRequest("limit_exceeded", message)) { try audioOnly.resolve() }
        }
    }

    @Test func outputsCarryTheirOptionsWithDefaultsForWhatIsLeftOut() throws {
        let c = try decode(
            #"{"name":"r1","outputs":[{"url":"rtmp://h/live/k","queueMs":3000,"maxRetries":5,"backoff":{"initialMaxMs":1000,"maxMs":20000}},{"url":"file:///tmp/x.flv","maxRetries":null}]}"#
        ).resolve()
        #expect(
            c.outputs == [
                OutputSpec(
                    url: "rtmp://h/live/k",
                    options: OutputOptions(
                        queueLimitMs: 3000, maxRetries: 5,
                        backoff: BackoffOptions(initialMaxMs: 1000, maxMs: 20_000))),
                OutputSpec(url: "file:///tmp/x.flv", options: OutputOptions(interleave: .strict)),
            ])
        #expect(
            c.outputs[1].options
                == OutputOptions(
                    queueLimitMs: 2000, maxRetries: nil, backoff: BackoffOptions(initialMaxMs: 2000, maxMs: 10_000),
                    interleave: .strict))
    }

    /// RTMP gets the low-latency order unless told otherwise, a file the strict one; anything else is refused.
    @Test func interleaveDefaultsByDestinationAndCanBeChosen() throws {
        let c = try decode(
            #"{"name":"r1","outputs":[{"url":"rtmp://h/live/a"},{"url":"rtmp://h/live/b","interleave":"strict"},{"url":"FILE:///tmp/x.flv"},{"url":"file:///tmp/y.flv","interleave":"lowLatency"}]}"#
        ).resolve()
        #expect(c.outputs.map(\.options.interleave) == [.lowLatency, .strict, .strict, .lowLatency])
        let bad = try decode(#"{"name":"r1","outputs":[{"url":"rtmp://h/live/a","interleave":"fast"}]}"#)
        do {
            _ = try bad.resolve()
            Issue.record("accepted interleave fast")
        } catch {
            #expect(error.kind == .invalid && error.code == "invalid_output")
            #expect(error.message == #"interleave must be "lowLatency" or "strict", got "fast""#)
        }
    }

    @Test func outputOptionsOutOfRangeAreInvalidOutputNamingTheLimit() throws {
        let cases: [(String, String, String)] = [
            (
                #"{"url":"rtmp://h/live/k","queueMs":50}"#, "invalid_output",
                "queueMs must be within 100...10000, got 50"
            ),
            (
                #"{"url":"rtmp://h/live/k","maxRetries":-1}"#, "invalid_output",
                "maxRetries must be within 0...100000, got -1"
            ),
            (
                #"{"url":"rtmp://h/live/k","backoff":{"initialMaxMs":5000,"maxMs":4000}}"#, "invalid_output",
                "backoff.maxMs must be at least backoff.initialMaxMs (5000), got 4000"
            ),
            (
                #"{"url":"rtmp://h/live/k","backoff":{"initialMaxMs":99}}"#, "invalid_output",
                "backoff.initialMaxMs must be within 100...60000, got 99"
            ),
        ]
        for (json, code, message) in cases {
            let request = try JSONDecoder().decode(OutputRequest.self, from: Data(json.utf8))
            #expect(throws: RoomError.badRequest(code, message)) { try request.resolve() }
            let room = try decode(#"{"name":"r1","outputs":["# + json + "]}")
            #expect(throws: RoomError.badRequest(code, message)) { try room.resolve() }
        }
        let nine = Array(repeating: #"{"url":"file:///tmp/x.flv"}"#, count: 9).joined(separator: ",")
        #expect(throws: RoomError.badRequest("limit_exceeded", "at most 8 outputs per room")) {
            try decode(#"{"name":"r1","outputs":["# + nine + "]}").resolve()
        }
    }

    @Test func anHLSOutputTakesItsSettingsAndNoURLAndARoomHasOneAtMost() throws {
        let room = try decode(
            #"{"name":"r1","outputs":[{"kind":"hls","segmentSeconds":4,"partSeconds":0.5,"windowSegments":5,"public":true,"vod":true}]}"#
        ).resolve()
        #expect(
            room.outputs.first?.hls
                == HLSOptions(segmentSeconds: 4, partSeconds: 0.5, windowSegments: 5, isPublic: true, vod: true))
        #expect(room.outputs.first?.options.interleave == .lowLatency)
        let plain = try decode(#"{"name":"r1","outputs":[{"kind":"hls","partSeconds":0}]}"#).resolve()
        #expect(plain.outputs.first?.hls == HLSOptions(partSeconds: nil))
        // A stored definition comes back the same (it is decoded as a POST's body).
        let stored = try JSONDecoder().decode(RoomConfigRequest.self, from: RoomDefinition(room).json).resolve()
        #expect(stored.outputs == room.outputs)
        let cases: [(String, String)] = [
            (#"{"kind":"hls","url":"rtmp://h/live/k"}"#, "an HLS output takes no url"),
            (#"{"kind":"dash"}"#, #"kind is "hls" or absent, got "dash""#),
            (#"{"kind":"hls","segmentSeconds":0.5}"#, "segmentSeconds is 1 to 10"),
            (#"{"kind":"hls","partSeconds":0.05}"#, "partSeconds is 0.1 to 2 (or 0: plain HLS)"),
            (#"{"kind":"hls","segmentSeconds":1,"partSeconds":0.6}"#, "partSeconds is at most half of segmentSeconds"),
            (#"{"kind":"hls","windowSegments":2}"#, "windowSegments is 3 to 30"),
            (#"{}"#, #"an output needs a url (or "kind":"hls")"#),
        ]
        for (json, message) in cases {
            let request = try JSONDecoder().decode(OutputRequest.self, from: Data(json.utf8))
            #expect(throws: RoomError.badRequest("invalid_output", message)) { try request.resolve() }
        }
        #expect(throws: RoomError.badRequest("invalid_output", "a room has at most one HLS output")) {
            try decode(#"{"name":"r1","outputs":[{"kind":"hls"},{"kind":"hls"}]}"#).resolve()
        }
    }

    @Test func adaptiveVideoAndStatusIntervalResolve() throws {
        let c = try decode(
            #"{"name":"r1","video":{"bitrate":1000,"adaptiveBitrate":true,"minBitrate":200,"dynamicFps":true},"statusIntervalMs":5000}"#
        ).resolve()
        #expect(c.video.adaptiveBitrate && c.video.dynamicFps)
        #expect(c.video.minBitrateKbps == 200 && c.statusIntervalMs == 5000)
        #expect(c.adaptation.bitrate?.targetKbps == 1000 && c.adaptation.bitrate?.minKbps == 200)
        #expect(c.adaptation.frameRate?.maxFps == 30 && c.adaptation.frameRate?.minFps == 10)
        // The floor defaults to a quarter of the bitrate, never under 64 kbps; off unless asked for.
        let quarter = try decode(#"{"name":"r1","video":{"bitrate":1000}}"#).resolve()
        #expect(quarter.video.minBitrateKbps == 250 && !quarter.video.adaptiveBitrate && !quarter.adaptation.isEnabled)
        #expect(try decode(#"{"name":"r1","video":{"preset":"low1"}}"#).resolve().video.minBitrateKbps == 64)
        let audioOnly = try decode(
            #"{"name":"r1","audioOnly":true,"video":{"adaptiveBitrate":true,"dynamicFps":true}}"#
        ).resolve()
        #expect(!audioOnly.adaptation.isEnabled)
    }

    @Test func adaptiveVideoAndStatusIntervalLimitsAreNamed() throws {
        let cases: [(String, String)] = [
            (
                #"{"name":"r1","video":{"bitrate":1000,"minBitrate":63}}"#,
                "video.minBitrate (kbps) must be within 64...1000, got 63"
            ),
            (
                #"{"name":"r1","video":{"bitrate":1000,"minBitrate":1500}}"#,
                "video.minBitrate (kbps) must be within 64...1000, got 1500"
            ),
            (#"{"name":"r1","statusIntervalMs":999}"#, "statusIntervalMs must be within 1000...60000, got 999"),
            (#"{"name":"r1","statusIntervalMs":60001}"#, "statusIntervalMs must be within 1000...60000, got 60001"),
        ]
        for (json, message) in cases {
            #expect(throws: RoomError.badRequest("limit_exceeded", message)) { try decode(json).resolve() }
        }
    }
}

@Suite struct RoomEventTests {
    @Test func eventsEncodeTypeRoomTimeAndTheirFields() {
        let time = Date(timeIntervalSince1970: 1_700_000_000.25)
        #expect(
            RoomEvent.participantLeft(userId: "bob", reason: .kicked).json(room: "r1", time: time)
                == #"{"reason":"kicked","room":"r1","time":"2023-11-14T22:13:20.250Z","type":"participant_left","userId":"bob"}"#
        )
        #expect(
            RoomEvent.roomClosed.json(room: "r1", time: time)
                == #"{"room":"r1","time":"2023-11-14T22:13:20.250Z","type":"room_closed"}"#)
    }

    @Test func aReaderThatFallsBehindIsDroppedNotBuffered() async {
        let hub = EventHub(room: "r1", bufferLimit: 2)
        let stream = hub.subscribe()
        for _ in 0..<3 { hub.publish(.roomClosed) }
        #expect(hub.subscriberCount == 0)
        var count = 0
        for await _ in stream { count += 1 }
        #expect(count == 2)
    }

    @Test func outputEventsCarryAttemptAndStatus() {
        let time = Date(timeIntervalSince1970: 1_700_000_000.25)
        #expect(
            RoomEvent.outputState(
                output: "o1", url: "rtmp://h/live/se…", state: "reconnecting", attempt: 2,
                error: "cannot connect to h:1935: Connection refused"
            ).json(room: "r1", time: time)
                == #"{"attempt":2,"error":"cannot connect to h:1935: Connection refused","output":"o1","room":"r1","state":"reconnecting","time":"2023-11-14T22:13:20.250Z","type":"output_state","url":"rtmp://h/live/se…"}"#
        )
        let status = OutputStatus(
            videoFps: 23.3, audioFps: 46.9, kbps: 1210, droppedVideoFrames: 12, droppedAudioFrames: 0, queueMs: 480)
        #expect(
            RoomEvent.outputStatus(output: "o2", url: "file:///tmp/a.flv", status: status, bitrate: 1125).json(
                room: "r1", time: time)
                == #"{"audioFps":46.9,"bitrate":1125,"droppedAudioFrames":0,"droppedVideoFrames":12,"kbps":1210,"output":"o2","queueMs":480,"room":"r1","time":"2023-11-14T22:13:20.250Z","type":"output_status","url":"file:///tmp/a.flv","videoFps":23.3}"#
        )
    }
}
