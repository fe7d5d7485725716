import CAVCodec

/// libavcodec return codes turned into `CodecError`s with `av_strerror`'s text.
enum AVError {
    static let again = cohost_averror_eagain()
    static let endOfFile = cohost_averror_eof()

    static func error(_ code: Int32, _ what: String) -> CodecError {
        var buffer = [CChar](repeating: 0, count: 128)
        buffer.withUnsafeMutableBufferPointer { cohost_av_error_string(code, $0.baseAddress, $0.count) }
        let text = buffer.withUnsafeBufferPointer { $0.baseAddress.map { String(cString: $0) } ?? "error \(code)" }
        return CodecError(library: "avcodec", message: "\(what): \(text)")
    }

    static func error(_ message: String) -> CodecError { CodecError(library: "avcodec", message: message) }

    /// libavcodec logs to stderr at INFO by default; warnings and errors are enough for a server.
    static let quietLogs: Void = { av_log_set_level(AV_LOG_WARNING) }()
}
