import Foundation
import Testing

@testable import Publishing

/// What the HTTP layer reads from an HLS output: the playlist's exact text, blocking reloads, preload-hinted parts,
/// file names, and the end of the stream.
@Suite("HLS stream")
struct HLSStreamTests {
    static let start = Date(timeIntervalSince1970: 1_795_900_000.25)

    /// Two closed segments (the second after a discontinuity with a new init section) and an open one with a part.
    static func stream(_ options: HLSOptions = HLSOptions(windowSegments: 6)) -> HLSStream {
        let stream = HLSStream(options: options)
        stream.setInit(0, bytes: [1, 2, 3])
        stream.openSegment(initIndex: 0, discontinuity: false, programDate: start)
        stream.addPart([10, 11], durationMs: 1000, independent: true)
        stream.addPart([12], durationMs: 1000, independent: false)
        stream.closeSegment(durationMs: 2000)
        stream.setInit(1, bytes: [4, 5])
        stream.openSegment(initIndex: 1, discontinuity: true, programDate: start.addingTimeInterval(60))
        stream.addPart([20], durationMs: 1000, independent: true)
        stream.addPart([21, 22, 23], durationMs: 900, independent: true)
        stream.closeSegment(durationMs: 1900)
        stream.openSegment(initIndex: 1, discontinuity: false, programDate: start.addingTimeInterval(61.9))
        stream.addPart([30], durationMs: 333, independent: true)
        return stream
    }

    @Test("the Low-Latency playlist: server control, part target, parts, a map per init section, a preload hint")
    func lowLatencyText() {
        let options = HLSOptions(segmentSeconds: 2, partSeconds: 1, windowSegments: 6)
        let text = Self.stream(options).playlist(query: "token=abc.def")
        #expect(
            text == """
                #EXTM3U
                #EXT-X-VERSION:6
                #EXT-X-TARGETDURATION:2
                #EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=3.000
                #EXT-X-PART-INF:PART-TARGET=1.000
                #EXT-X-MEDIA-SEQUENCE:0
                #EXT-X-INDEPENDENT-SEGMENTS
                #EXT-X-MAP:URI="init0.mp4?token=abc.def"
                #EXT-X-PROGRAM-DATE-TIME:2026-11-28T21:06:40.250Z
                #EXT-X-PART:DURATION=1.000,URI="p0.0.m4s?token=abc.def",INDEPENDENT=YES
                #EXT-X-PART:DURATION=1.000,URI="p0.1.m4s?token=abc.def"
                #EXTINF:2.000,
                s0.m4s?token=abc.def
                #EXT-X-DISCONTINUITY
                #EXT-X-MAP:URI="init1.mp4?token=abc.def"
                #EXT-X-PROGRAM-DATE-TIME:2026-11-28T21:07:40.250Z
                #EXT-X-PART:DURATION=1.000,URI="p1.0.m4s?token=abc.def",INDEPENDENT=YES
                #EXT-X-PART:DURATION=0.900,URI="p1.1.m4s?token=abc.def",INDEPENDENT=YES
                #EXTINF:1.900,
                s1.m4s?token=abc.def
                #EXT-X-PROGRAM-DATE-TIME:2026-11-28T21:07:42.150Z
                #EXT-X-PART:DURATION=0.333,URI="p2.0.m4s?token=abc.def",INDEPENDENT=YES
                #EXT-X-PRELOAD-HINT:TYPE=PART,URI="p2.1.m4s?token=abc.def"

                """)
    }

    @Test("parts older than three target durations from the end are no longer listed")
    func oldPartsLeaveThePlaylist() {
        let stream = HLSStream(options: HLSOptions(segmentSeconds: 1, partSeconds: 0.5, windowSegments: 6))
        stream.setInit(0, bytes: [1])
        for msn in 0..<5 {
            stream.openSegment(initIndex: 0, discontinuity: false, programDate: Self.start)
            stream.addPart([UInt8(msn)], durationMs: 500, independent: true)
            stream.addPart([UInt8(msn)], durationMs: 500, independent: true)
            stream.closeSegment(durationMs: 1000)
        }
        let text = stream.playlist() ?? ""
        #expect(!text.contains("p1.") && text.contains("p2.0.m4s") && text.contains("p4.1.m4s"))
        #expect(text.contains("s0.m4s") && !text.contains("PRELOAD-HINT"))
    }

    @Test("a blocking reload returns when the part it names is added, and at once for one already there")
    func blockingReload() async {
        let stream = Self.stream()
        #expect(await stream.waitForPlaylist(msn: 2, part: 0) == .ready)
        #expect(await stream.waitForPlaylist(msn: 1, part: 5) == .ready, "a later segment has parts: ready")
        let waiting = Task { await stream.waitForPlaylist(msn: 2, part: 1) }
        let answered = Task { await stream.file(named: "p2.1.m4s") }
        // Neither answers before the part exists (each would return .timedOut / .notFound at once otherwise).
        try? await Task.sleep(for: .milliseconds(50))
        stream.addPart([31, 32], durationMs: 333, independent: false)
        #expect(await waiting.value == .ready)
        #expect(await answered.value == .media(bytes: [31, 32], contentType: "video/iso.segment"))
    }

    @Test("a segment more than two ahead is refused; a segment not complete yet is waited for")
    func blockingBounds() async {
        let stream = Self.stream()
        #expect(await stream.waitForPlaylist(msn: 5, part: nil) == .tooFarAhead)
        let whole = Task { await stream.waitForPlaylist(msn: 2, part: nil) }
        try? await Task.sleep(for: .milliseconds(50))
        stream.closeSegment(durationMs: 333)
        #expect(await whole.value == .ready)
    }

    @Test("ending the stream answers every waiter and serves nothing more")
    func end() async {
        let stream = Self.stream()
        let waiting = Task { await stream.waitForPlaylist(msn: 3, part: 0) }
        try? await Task.sleep(for: .milliseconds(50))
        stream.end()
        #expect(await waiting.value == .timedOut)
        #expect(stream.playlist() == nil)
        #expect(await stream.file(named: "init1.mp4") == .notFound)
    }

    @Test("file names: init<k>.mp4, s<msn>.m4s, p<msn>.<part>.m4s and nothing else")
    func names() {
        #expect(HLSStream.parse("init0.mp4") == .initSegment(0))
        #expect(HLSStream.parse("s12.m4s") == .segment(12))
        #expect(HLSStream.parse("p12.3.m4s") == .part(12, 3))
        for bad in [
            "init.mp4", "s.m4s", "p1.m4s", "p1..m4s", "s-1.m4s", "s1.mp4", "p1.2.3.m4s", "s1234567890.m4s",
            "s١.m4s", "index.m3u8", "",
        ] {
            #expect(HLSStream.parse(bad) == nil, "\(bad)")
        }
    }
}
