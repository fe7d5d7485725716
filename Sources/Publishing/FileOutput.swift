import Foundation
import Logging

/// Writes the stream to a file on its own thread: FLV (`file:///absolute/path.flv`, or any other name), fragmented
/// MP4 (`.mp4`) or MPEG-TS (`.ts`), the last two by libavformat's muxers from the same tags (`ProgrammeMuxer`).
///
/// An FLV file starts with the FLV header (flags from the header tags: video only when there is an AVC
/// sequence header), then the header tags; an MP4 or TS file with its container's header for the streams the
/// header tags describe. Then every tag as it is drained from the bounded queue,
/// starting at a keyframe with the audio of that moment (`StartGate`; the owner is asked for a keyframe
/// when the file opens). Each tag (an MP4 fragment, every half second) goes to the
/// kernel as soon as it is written (`RecordingFile` has no user-space buffer), so the file is readable
/// to its last tag (fragment) even if the process is killed. A write failure (disk full, path gone) is final:
/// state `error`. Retry options do not apply to files.
public final class FileOutput: Output {
    public let id: String
    public let url: String
    /// The file path, nil when the URL was not a usable file URL.
    public let path: String?
    public var options: OutputOptions { core.options }
    private let core: OutputCore
    private let quota: RecordingQuota?

    /// `path`: where to write, when the caller resolved the URL already (`OutputRules.filePath`).
    public init(
        id: String, url: String, path resolved: String? = nil, options: OutputOptions = OutputOptions(),
        quota: RecordingQuota? = nil, logger: Logger,
        onKeyframeNeeded: @escaping KeyframeRequestHandler = {}, onStateChange: @escaping OutputStateHandler
    ) {
        self.id = id
        self.url = url
        self.quota = quota
        var logger = logger
        logger[metadataKey: "output"] = "\(id)"
        var initial = OutputStateChange(state: .disconnected)
        switch resolved.map({ .success($0) }) ?? OutputURL.filePath(url) {
        case .success(let path):
            self.path = path
        case .failure(let error):
            path = nil
            initial = OutputStateChange(state: .error, message: error.description)
        }
        if initial.state != .error {
            do { try options.validate() } catch {
                initial = OutputStateChange(state: .error, message: error.description)
            }
        }
        core = OutputCore(
            logger: logger, options: options, initial: initial, onKeyframeNeeded: onKeyframeNeeded,
            onStateChange: onStateChange)
    }

    public var state: OutputState { core.state }
    public var stateChange: OutputStateChange { core.stateChange }
    public var stats: OutputStats { core.stats }
    public var lastMessage: String? { core.message }

    public func replaceHeaders(_ headers: [FLVTag]) { core.replaceHeaders(headers) }

    public func start(headers: [FLVTag]) {
        guard let path, core.begin(headers: headers) else { return }
        core.transition(to: .connecting, attempt: 0, message: nil)
        OutputCore.startWorker(named: "file-\(id)") { [self] in run(path: path) }
    }

    public func send(_ tag: FLVTag) {
        core.enqueue(tag)
    }

    /// Writes what is queued (bounded by the flush time) and closes the file.
    public func stop() {
        core.requestStopAndWait()
    }

    private func run(path: String) {
        do {
            // Closed when this returns (the writer's deinit), before the final state is reported.
            let file = try RecordingFile(path: path, quota: quota)
            let headers = core.headerTags
            let hasVideo = headers.contains { $0.kind == .video }
            let hasAudio = headers.contains { $0.kind == .audio } || !hasVideo
            let writer: Writer
            if let container = Self.container(of: path) {
                let io = try MuxerIO.descriptor(file.fileDescriptor)
                writer = .muxed(try ProgrammeMuxer(io: io, container: container, headers: headers), file)
            } else {
                writer = .flv(file)
                try file.writeHeader(hasVideo: hasVideo, hasAudio: hasAudio)
                for header in headers { try write(header, with: writer) }
            }
            core.onKeyframeNeeded()
            core.transition(to: .connected, message: nil)
            var gate = StartGate(hasVideo: hasVideo, queueLimitMs: core.options.queueLimitMs)
            var ready: [FLVTag] = []  // reused for every tag
            ready.reserveCapacity(64)
            while let tag = core.nextTag() {
                let skipped = gate.admit(tag, into: &ready)
                core.recordSkipped(video: skipped.video, audio: skipped.audio)
                for tag in ready { try write(tag, with: writer) }
                ready.removeAll(keepingCapacity: true)
            }
            gate.flush(into: &ready)
            for tag in ready { try write(tag, with: writer) }
            try writer.close()
            core.finish(state: .disconnected, message: nil)
        } catch {
            core.finish(state: .error, message: error.description)
        }
    }

    private func write(_ tag: FLVTag, with writer: Writer) throws(OutputIOError) {
        guard tag.body.count <= FLVTag.maxBodySize else {
            core.logger.warning("dropping a \(tag.kind) tag of \(tag.body.count) bytes: too large for FLV")
            return
        }
        switch writer {
        case .flv(let file): try file.write(tag)
        case .muxed(let muxer, let file):
            try muxer.write(tag)
            try file.countMuxedBytes()
        }
        core.recordSent(tag)
    }

    /// The file and what writes its container.
    private enum Writer {
        case flv(RecordingFile)
        case muxed(ProgrammeMuxer, RecordingFile)

        /// Ends the container (the MP4 muxer's last fragment) and closes the file.
        func close() throws(OutputIOError) {
            switch self {
            case .flv(let file): try file.close()
            case .muxed(let muxer, let file):
                try muxer.finish()
                try file.close()
            }
        }
    }

    /// The container a file's name asks for: nil for FLV.
    static func container(of path: String) -> ProgrammeMuxer.Container? {
        let lower = path.lowercased()
        if lower.hasSuffix(".mp4") { return .fragmentedMP4 }
        if lower.hasSuffix(".ts") { return .mpegTS }
        return nil
    }
}
