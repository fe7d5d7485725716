/// A refusal the HTTP layer turns into `{"error":{"code","message"}}` with `status`.
///
/// Rooms decides what went wrong and how to say it; Server only maps it onto the wire.
public struct RoomError: Error, Equatable, Sendable, CustomStringConvertible {
    public let status: Int
    public let code: String
    public let message: String

    public init(status: Int, code: String, message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    public var description: String { "\(status) \(code): \(message)" }

    public static func badRequest(_ code: String, _ message: String) -> RoomError {
        .init(status: 400, code: code, message: message)
    }
    public static func notFound(_ message: String) -> RoomError {
        .init(status: 404, code: "not_found", message: message)
    }
    public static func conflict(_ code: String, _ message: String) -> RoomError {
        .init(status: 409, code: code, message: message)
    }
    public static func forbidden(_ message: String) -> RoomError {
        .init(status: 403, code: "forbidden", message: message)
    }
}
