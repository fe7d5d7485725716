import Foundation
import Logging

/// Writes the stream to an FLV file (`file:///absolute/path.flv`) on its own thread.
///
/// The file starts with the FLV header (flags from the header tags: video only when there is an AVC
/// sequence header), then the header tags, then every tag as it is drained from the bounded queue.
/// A write failure (disk full, path gone) is final: state `error`.
public final class FileOutput: Output {
    public let id: String
    public let url: String
    /// The file path, nil when the URL was not a usable file URL.
    public let path: String?
    private let core: OutputCore

    public init(id: String, url: String, logger: Logger, onStateChange: @escaping OutputStateHandler,
                queueLimitMs: Int = 2000) {
        self.id = id
        self.url = url
        var logger = logger
        logger[metadataKey: "output"] = "\(id)"
        switch OutputURL.filePath(url) {
        case .success(let path):
            self.path = path
            core = OutputCore(logger: logger, queueLimitMs: queueLimitMs, initialState: .disconnected, message: nil,
                              onStateChange: onStateChange)
        case .failure(let error):
            path = nil
            core = OutputCore(logger: logger, queueLimitMs: queueLimitMs, initialState: .error,
                              message: error.description, onStateChange: onStateChange)
        }
    }

    public var state: OutputState { core.state }
    public var stats: OutputStats { core.stats }
    public var lastMessage: String? { core.message }

    public func start(headers: [FLVTag]) {
        guard let path, core.begin(headers: headers) else { return }
        core.transition(to: .connecting, message: nil)
        let thread = Thread { [self] in run(path: path) }
        thread.name = "flv-file-\(id)"
        thread.start()
    }

    public func send(_ tag: FLVTag) {
        core.enqueue(tag)
    }

    public func stop() {
        core.requestStopAndWait()
    }

    private func run(path: String) {
        do {
            let writer = try FLVFileWriter(path: path)
            let headers = core.headerTags
            let hasVideo = headers.contains { $0.kind == .video }
            let hasAudio = headers.contains { $0.kind == .audio } || !hasVideo
            try writer.writeHeader(hasVideo: hasVideo, hasAudio: hasAudio)
            for header in headers { try write(header, with: writer) }
            core.transition(to: .connected, message: nil)
            while let tag = core.nextTag() {
                try write(tag, with: writer)
            }
            core.finish(state: .disconnected, message: nil)
        } catch {
            core.finish(state: .error, message: error.description)
        }
    }

    private func write(_ tag: FLVTag, with writer: FLVFileWriter) throws(OutputIOError) {
        guard tag.body.count <= FLVTag.maxBodySize else {
            core.logger.warning("dropping a \(tag.kind) tag of \(tag.body.count) bytes: too large for FLV")
            return
        }
        try writer.write(tag)
        core.recordSent(bytes: tag.serializedSize)
    }
}
