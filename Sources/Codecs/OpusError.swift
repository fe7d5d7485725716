import COpus

/// libopus return codes as `CodecError`s carrying `opus_strerror`'s text.
enum OpusError {
    static func error(_ code: Int32, _ what: String) -> CodecError {
        let text = opus_strerror(code).map { String(cString: $0) } ?? "error \(code)"
        return CodecError(library: "opus", message: "\(what): \(text)")
    }

    static func error(_ message: String) -> CodecError { CodecError(library: "opus", message: message) }

    /// The longest Opus packet: 120 ms at 48 kHz.
    static let maxFrames = 5760
}
