import Foundation
import Hummingbird
import Rooms
import CohostAPI

/// Every refusal on the HTTP API: a status and `{"error":{"code","message"}}`.
public struct APIError: HTTPResponseError, Sendable {
    public let status: HTTPResponse.Status
    public let code: String
    public let message: String

    public init(status: HTTPResponse.Status, code: String, message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    public init(_ error: RoomError) {
        self.init(status: Self.status(of: error.kind), code: error.code, message: error.message)
    }

    /// The one place a domain refusal becomes an HTTP status.
    static func status(of kind: RoomError.Kind) -> HTTPResponse.Status {
        switch kind {
        case .invalid: .badRequest
        case .forbidden: .forbidden
        case .notFound: .notFound
        case .conflict: .conflict
        case .tooLarge: .contentTooLarge
        case .unsupported: .unsupportedMediaType
        case .limitExceeded: .tooManyRequests
        case .unavailable: .serviceUnavailable
        case .internal: .internalServerError
        case .notImplemented: .notImplemented
        }
    }

    public init(_ error: TokenError) {
        self.init(status: .unauthorized, code: error.code, message: error.message)
    }

    public static func forbidden(_ message: String) -> APIError {
        .init(status: .forbidden, code: "forbidden", message: message)
    }
    public static func badRequest(_ code: String, _ message: String) -> APIError {
        .init(status: .badRequest, code: code, message: message)
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        Self.response(status: status, code: code, message: message)
    }

    static func response(status: HTTPResponse.Status, code: String, message: String) -> Response {
        let data = (try? JSONEncoder().encode(ErrorBody(code: code, message: message))) ?? Data()
        return Response(
            status: status, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
}

/// Turns anything thrown by a handler into the JSON error shape, so no route leaks a plain-text 500.
struct ErrorShapeMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            return APIError.response(status: error.status, code: error.code, message: error.message)
        } catch let error as RoomError {
            let e = APIError(error)
            return APIError.response(status: e.status, code: e.code, message: e.message)
        } catch let error as HTTPError {
            let code =
                error.status == .notFound
                ? "not_found" : (error.status == .contentTooLarge ? "body_too_large" : "bad_request")
            return APIError.response(
                status: error.status, code: code, message: error.body ?? "\(error.status.reasonPhrase)")
        } catch {
            context.logger.error("unhandled error", metadata: ["error": "\(error)"])
            return APIError.response(status: .internalServerError, code: "internal", message: "internal error")
        }
    }
}
