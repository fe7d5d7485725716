import Foundation

/// An FLV file being written: the owner of its file descriptor.
///
/// Writes go straight to the descriptor (no user-space buffer), so every finished tag is in the
/// kernel and survives the process being killed; readers such as ffprobe see the file up to the last tag.
/// `@unchecked Sendable`: used by its FileOutput's worker thread only.
final class FLVFileWriter: @unchecked Sendable {
    private let descriptor: Int32
    let path: String
    /// Reused for every tag (hot path: one tag per frame).
    private var buffer: [UInt8] = []

    init(path: String) throws(OutputIOError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw OutputIOError(description: "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        descriptor = fd
        self.path = path
    }

    deinit { close(descriptor) }

    func writeHeader(hasVideo: Bool, hasAudio: Bool) throws(OutputIOError) {
        try writeAll(FLVMuxer.fileHeader(hasVideo: hasVideo, hasAudio: hasAudio))
    }

    func write(_ tag: FLVTag) throws(OutputIOError) {
        buffer.removeAll(keepingCapacity: true)
        tag.appendSerialized(to: &buffer)
        try writeAll(buffer)
    }

    private func writeAll(_ bytes: [UInt8]) throws(OutputIOError) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { raw in
                Foundation.write(descriptor, raw.baseAddress! + offset, raw.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw OutputIOError(description: "writing \(path) failed: \(String(cString: strerror(errno)))")
            }
            offset += written
        }
    }
}
