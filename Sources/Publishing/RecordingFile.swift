import Foundation

/// A recording being written: the owner of its file descriptor, and the writer of FLV, the container Cohost
/// writes itself (MP4 and MPEG-TS go through `ProgrammeMuxer` into `descriptor`).
///
/// Writes go straight to the descriptor (no user-space buffer), so every finished tag is in the
/// kernel and survives the process being killed (SIGKILL included); readers such as ffprobe see the
/// file up to the last tag. `close` reports a failing close (NFS, quota) instead of losing it in `deinit`.
/// `@unchecked Sendable`: used by its FileOutput's worker thread only.
final class RecordingFile: @unchecked Sendable {
    private var descriptor: Int32
    let path: String
    /// Reused for every tag (hot path: one tag per frame).
    private var buffer: [UInt8] = []
    private let quota: RecordingQuota?
    /// The file's size as last counted against `quota`.
    private var counted: Int64 = 0

    /// Creates the file: never an existing one (another recording is not truncated) and never through a symbolic
    /// link. The error names the file, not the directories around it. Its bytes count against `quota`.
    init(path: String, quota: RecordingQuota? = nil) throws(OutputIOError) {
        self.quota = quota
        // Readable by the server's user alone: a recording is the show, before anyone decided to publish it.
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let name = path.split(separator: "/").last.map(String.init) ?? path
            throw OutputIOError(
                description: "cannot create the recording \(name): \(String(cString: strerror(errno)))", isFinal: true)
        }
        descriptor = fd
        self.path = path
        buffer.reserveCapacity(64 * 1024)
    }

    deinit { if descriptor >= 0 { Foundation.close(descriptor) } }

    /// The open descriptor, for a muxer to write through (-1 once closed).
    var fileDescriptor: Int32 { descriptor }

    /// Counts what a muxer wrote through the descriptor since the last call against the quota; throws the quota's
    /// refusal once it is passed (by at most the muxer's buffer). A `fstat`, called once per frame written.
    func countMuxedBytes() throws(OutputIOError) {
        guard let quota, descriptor >= 0 else { return }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return }
        let grown = Int64(status.st_size) - counted
        guard grown > 0 else { return }
        counted = Int64(status.st_size)
        if let refusal = quota.take(grown) { throw OutputIOError(description: refusal, isFinal: true) }
    }

    func writeHeader(hasVideo: Bool, hasAudio: Bool) throws(OutputIOError) {
        buffer.removeAll(keepingCapacity: true)
        buffer.append(contentsOf: FLVMuxer.fileHeader(hasVideo: hasVideo, hasAudio: hasAudio))
        try writeBuffer()
    }

    /// Writes one whole tag (header, body, PreviousTagSize) with as few `write` calls as the kernel allows.
    func write(_ tag: FLVTag) throws(OutputIOError) {
        buffer.removeAll(keepingCapacity: true)
        tag.appendSerialized(to: &buffer)
        try writeBuffer()
    }

    /// Writes bytes as they are (an HLS recording's init section and fragments).
    func write(bytes: [UInt8]) throws(OutputIOError) {
        buffer.removeAll(keepingCapacity: true)
        buffer.append(contentsOf: bytes)
        try writeBuffer()
    }

    /// Flushes the file to the disk (a recording must survive a power cut after its output stopped) and closes it.
    func close() throws(OutputIOError) {
        guard descriptor >= 0 else { return }
        let fd = descriptor
        descriptor = -1
        let synced = fsync(fd) == 0
        guard Foundation.close(fd) == 0, synced else {
            throw OutputIOError(
                description: "closing \(path) failed: \(String(cString: strerror(errno)))", isFinal: true)
        }
    }

    private func writeBuffer() throws(OutputIOError) {
        guard descriptor >= 0 else { throw OutputIOError(description: "\(path) is closed", isFinal: true) }
        if let quota {
            if let refusal = quota.take(Int64(buffer.count)) {
                throw OutputIOError(description: refusal, isFinal: true)
            }
            counted += Int64(buffer.count)
        }
        var offset = 0
        while offset < buffer.count {
            let written = buffer.withUnsafeBytes { raw in
                Foundation.write(descriptor, raw.baseAddress! + offset, raw.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw OutputIOError(
                    description: "writing \(path) failed: \(String(cString: strerror(errno)))", isFinal: true)
            }
            offset += written
        }
    }
}
