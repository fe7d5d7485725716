import Foundation
import Logging

/// Serves the programme as HLS or Low-Latency HLS: its own H.264 and AAC cut into CMAF parts and segments
/// (`HLSPackager`, libavformat's MP4 muxer) on the output's thread, kept in memory in `stream` for the HTTP layer,
/// and optionally copied into the recordings directory (`HLSRecording`). `connected` once the first segment has
/// started; a muxer failure is final (`error`). Retry options do not apply. When it stops, the stream ends: waiting
/// requests are answered and the playlist is gone.
public final class HLSOutput: Output {
    public let id: String
    /// Where the playlist is served (`/v1/rooms/{room}/hls/index.m3u8`).
    public let url: String
    public let stream: HLSStream
    public var options: OutputOptions { core.options }
    private let core: OutputCore
    private let recordingDirectory: String?
    private let quota: RecordingQuota?

    /// `recordingDirectory`: where the VOD copy goes (made at start; it must not exist), when `hls.vod`; its bytes
    /// count against `quota`.
    public init(
        id: String, url: String, hls: HLSOptions, options: OutputOptions = OutputOptions(),
        recordingDirectory: String? = nil, quota: RecordingQuota? = nil, logger: Logger,
        onKeyframeNeeded: @escaping KeyframeRequestHandler = {}, onStateChange: @escaping OutputStateHandler
    ) {
        self.id = id
        self.url = url
        stream = HLSStream(options: hls)
        self.recordingDirectory = recordingDirectory
        self.quota = quota
        var logger = logger
        logger[metadataKey: "output"] = "\(id)"
        var initial = OutputStateChange(state: .disconnected)
        if let problem = hls.problem { initial = OutputStateChange(state: .error, message: problem) }
        core = OutputCore(
            logger: logger, options: options, initial: initial, onKeyframeNeeded: onKeyframeNeeded,
            onStateChange: onStateChange)
    }

    public var state: OutputState { core.state }
    public var stateChange: OutputStateChange { core.stateChange }
    public var stats: OutputStats { core.stats }

    public func replaceHeaders(_ headers: [FLVTag]) { core.replaceHeaders(headers) }

    public func start(headers: [FLVTag]) {
        guard core.begin(headers: headers) else { return }
        core.transition(to: .connecting, attempt: 0, message: nil)
        OutputCore.startWorker(named: "hls-\(id)") { [self] in run() }
    }

    public func send(_ tag: FLVTag) { core.enqueue(tag) }

    /// Packages what is queued (bounded by the flush time), closes the last segment and ends the stream.
    public func stop() { core.requestStopAndWait() }

    private func run() {
        var packager: HLSPackager?
        do {
            let recording = try recordingDirectory.map { directory throws(OutputIOError) in
                try HLSRecording(directory: directory, targetDuration: stream.options.targetDuration, quota: quota)
            }
            let made = HLSPackager(
                headers: core.headerTags, options: stream.options, stream: stream, recording: recording,
                requestKeyframe: core.onKeyframeNeeded)
            packager = made
            var announced = false
            var skipped = (video: 0, audio: 0)
            while let tag = core.nextTag() {
                try made.write(tag)
                if made.skippedVideo != skipped.video || made.skippedAudio != skipped.audio {
                    core.recordSkipped(
                        video: made.skippedVideo - skipped.video, audio: made.skippedAudio - skipped.audio)
                    skipped = (made.skippedVideo, made.skippedAudio)
                    continue
                }
                core.recordSent(tag)
                if !announced && stream.playlist() != nil {
                    announced = true
                    core.transition(to: .connected, attempt: 0, message: nil)
                }
            }
            try made.finish()
            stream.end()
            core.finish(state: .disconnected, message: nil)
        } catch {
            _ = try? packager?.finish()
            stream.end()
            core.finish(state: .error, message: error.description)
        }
    }
}
