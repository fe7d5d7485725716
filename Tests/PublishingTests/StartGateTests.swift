import Testing
@testable import Publishing

@Suite("Where a (re)started stream begins")
struct StartGateTests {
    private func video(_ ms: UInt32, key: Bool) -> FLVTag {
        FLVMuxer.videoTag(
            avcc: [0x00, 0x00, 0x00, 0x01, key ? 0x65 : 0x41], isKeyframe: key, timestampMs: ms, compositionTimeMs: 0)
    }
    private func audio(_ ms: UInt32) -> FLVTag { FLVMuxer.audioTag(aac: [0x21, 0x10, 0x04], timestampMs: ms) }

    private func label(_ tag: FLVTag) -> String {
        "\(tag.kind == .audio ? "A" : tag.isKeyframe ? "K" : "P")\(tag.timestampMs)"
    }

    /// Feeds the tags one by one, as the worker does; returns what was written and the skip counts.
    private func run(_ gate: inout StartGate, _ tags: [FLVTag]) -> (written: [String], video: Int, audio: Int) {
        var out: [FLVTag] = []
        var video = 0, audio = 0
        for tag in tags {
            let skipped = gate.admit(tag, into: &out)
            video += skipped.video
            audio += skipped.audio
        }
        return (out.map(label), video, audio)
    }

    @Test("after an outage, stale audio and dependent video go; the stream starts at the keyframe with its audio")
    func alignsOnTheKeyframe() {
        var gate = StartGate(hasVideo: true, queueLimitMs: 2000)
        let result = run(
            &gate,
            [
                audio(1000), video(1000, key: false), audio(1021), audio(1042), video(1042, key: false),
                audio(1064), audio(1085), video(1083, key: true), audio(1106), video(1125, key: false),
            ])
        // Held: A1000 A1021 A1042 A1064 A1085; the keyframe at 1083 keeps those at 1043 ms or later.
        #expect(result.written == ["A1064", "A1085", "K1083", "A1106", "P1125"])
        #expect(result.video == 2 && result.audio == 3)
    }

    @Test("audio-only streams pass untouched")
    func audioOnlyPasses() {
        var gate = StartGate(hasVideo: false, queueLimitMs: 2000)
        #expect(run(&gate, [audio(0), audio(21), audio(42)]).written == ["A0", "A21", "A42"])
    }

    @Test(
        "without a keyframe within the queue limit plus a second of held audio, sound is released and video still waits"
    )
    func stopsHoldingAfterALimit() {
        // A 2 s queue full of audio arrives at once after an outage: held, since the keyframe is on its way.
        var gate = StartGate(hasVideo: true, queueLimitMs: 2000)
        #expect(gate.holdLimitMs == 3000)
        let backlog = (0...140).map { audio(UInt32($0 * 64 / 3)) }  // A0 … A2986
        #expect(run(&gate, backlog).written.isEmpty)
        // No keyframe by A3008 (k = 141), the first tag more than 3000 ms after A0: everything held goes out.
        let result = run(&gate, [audio(3008), video(3010, key: false), audio(3029), video(3050, key: true)])
        #expect(result.written.count == 141 + 3)
        #expect(result.written.prefix(2) == ["A0", "A21"] && result.written.suffix(3) == ["A3008", "A3029", "K3050"])
        #expect(result.video == 1 && result.audio == 0)
    }

    @Test("low-latency order: the keyframe's own sound, arriving after it, is written; older sound is not")
    func soundArrivingAfterTheKeyframe() {
        var gate = StartGate(hasVideo: true, queueLimitMs: 2000)
        // Pictures run ≈100 ms ahead of the sound of the same instant.
        let result = run(
            &gate,
            [
                audio(900), video(1000, key: false), audio(921), video(1033, key: true),
                audio(943), audio(964), audio(985), audio(1006), audio(1028), video(1066, key: false), audio(1049),
            ])
        // The keyframe at 1033 keeps sound from 993 ms on, whether it came before or after it.
        #expect(result.written == ["K1033", "A1006", "A1028", "P1066", "A1049"])
        #expect(result.video == 1 && result.audio == 5)
    }

    @Test("sound that flowed before a late keyframe keeps flowing after it")
    func noFloorOnceSoundFlows() {
        var gate = StartGate(hasVideo: true, queueLimitMs: 100)
        // No keyframe within the hold limit (1100 ms): sound goes out unheld.
        var result = run(&gate, [audio(0), audio(1200)])
        #expect(result.written == ["A0", "A1200"])
        result = run(&gate, [video(1400, key: true), audio(1221), audio(1242)])
        #expect(result.written == ["K1400", "A1221", "A1242"])
        #expect(result.audio == 0)
    }

    @Test("what is still held at stop is written, not lost")
    func flushAtStop() {
        var gate = StartGate(hasVideo: true, queueLimitMs: 2000)
        var out: [FLVTag] = []
        _ = gate.admit(audio(0), into: &out)
        _ = gate.admit(audio(21), into: &out)
        #expect(out.isEmpty)
        gate.flush(into: &out)
        #expect(out.map(label) == ["A0", "A21"])
    }
}
