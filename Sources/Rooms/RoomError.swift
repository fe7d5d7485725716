/// A refusal: what went wrong (`kind`), the machine-readable `code` and a sentence for people.
///
/// Rooms decides what went wrong and how to say it; the HTTP layer alone maps a kind onto a status.
public struct RoomError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// The request is malformed or asks for something the rules refuse.
        case invalid
        case forbidden
        case notFound
        /// The name, the SSRC or the state is taken or does not allow it.
        case conflict
        case tooLarge
        /// The offer asks for a medium or transport this server does not take.
        case unsupported
        case limitExceeded
        /// A dependency (the room store) failed; trying again later may work.
        case unavailable
        /// Cohost itself failed (an encoder or decoder that would not open).
        case `internal`
        /// A feature this server does not have.
        case notImplemented
    }

    public let kind: Kind
    public let code: String
    public let message: String

    public init(_ kind: Kind, _ code: String, _ message: String) {
        self.kind = kind
        self.code = code
        self.message = message
    }

    public var description: String { "\(kind.rawValue) \(code): \(message)" }

    public static func badRequest(_ code: String, _ message: String) -> RoomError { .init(.invalid, code, message) }
    public static func notFound(_ message: String) -> RoomError { .init(.notFound, "not_found", message) }
    public static func conflict(_ code: String, _ message: String) -> RoomError { .init(.conflict, code, message) }
    public static func forbidden(_ message: String) -> RoomError { .init(.forbidden, "forbidden", message) }
    public static func forbidden(_ code: String, _ message: String) -> RoomError { .init(.forbidden, code, message) }
}
