import Testing
@testable import Publishing

@Suite("Output status rates")
struct OutputRateMeterTests {
    private func stats(
        video: Int, audio: Int, bytes: Int, droppedVideo: Int = 0, droppedAudio: Int = 0, queueMs: Int = 0
    ) -> OutputStats {
        var s = OutputStats()
        s.sentVideoFrames = video
        s.sentAudioFrames = audio
        s.sentBytes = bytes
        s.droppedVideoTags = droppedVideo
        s.droppedAudioTags = droppedAudio
        s.queueMs = queueMs
        return s
    }

    @Test("rates are the counter differences over the interval; drops are totals; the queue is as it is now")
    func ratesOverTheInterval() {
        var meter = OutputRateMeter(startMs: 1000)
        let first = meter.sample(stats(video: 72, audio: 141, bytes: 375_000, queueMs: 40), nowMs: 4000)
        #expect(
            first
                == OutputStatus(
                    videoFps: 24, audioFps: 47, kbps: 1000, droppedVideoFrames: 0, droppedAudioFrames: 0, queueMs: 40))
        let second = meter.sample(
            stats(video: 142, audio: 281, bytes: 600_000, droppedVideo: 12, droppedAudio: 3, queueMs: 880),
            nowMs: 7000)
        #expect(
            second
                == OutputStatus(
                    videoFps: 23.3, audioFps: 46.7, kbps: 600, droppedVideoFrames: 12, droppedAudioFrames: 3,
                    queueMs: 880))
    }

    @Test("a zero-length interval reports zero rates instead of dividing by zero")
    func zeroInterval() {
        var meter = OutputRateMeter(startMs: 500)
        #expect(meter.sample(stats(video: 10, audio: 10, bytes: 10_000), nowMs: 500) == OutputStatus())
    }
}
