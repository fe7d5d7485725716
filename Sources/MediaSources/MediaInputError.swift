/// A failure of libavformat, with its own message. It never carries the input's URL: a camera's URL may hold
/// credentials, and errors reach logs, events and the API.
public struct MediaInputError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) { self.message = message }

    public var description: String { "avformat: \(message)" }
}
