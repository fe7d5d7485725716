import CAVFormat

/// A failure of libavformat, with its own message. It never carries the input's URL: a camera's URL may hold
/// credentials, and errors reach logs, events and the API.
public struct MediaInputError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) { self.message = message }

    /// `what` and libav's message for `code`.
    init(_ code: Int32, _ what: String) {
        var buffer = [CChar](repeating: 0, count: 128)
        buffer.withUnsafeMutableBufferPointer { cohost_avformat_error_string(code, $0.baseAddress, $0.count) }
        let text = buffer.withUnsafeBufferPointer { $0.baseAddress.map { String(cString: $0) } ?? "error \(code)" }
        message = "\(what): \(text)"
    }

    public var description: String { "avformat: \(message)" }
}
