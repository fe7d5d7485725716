import Foundation
import CohostAPI

/// Why an API call failed, and the exit status it means for `cohost`: the server's refusal (1) or no answer at all (3).
public enum ClientError: Error, Equatable, CustomStringConvertible {
    /// The server answered with an error: its `error.code` and `error.message` (protocol/openapi.yaml), or the status
    /// when the body is not Cohost's (a proxy's page, say).
    case refused(status: Int, code: String, message: String)
    /// No HTTP answer: connection refused, name not resolved, TLS failure, timeout.
    case unreachable(url: String, reason: String)

    public var exitCode: Int32 {
        switch self {
        case .refused: 1
        case .unreachable: 3
        }
    }

    public var description: String {
        switch self {
        case let .refused(_, code, message): "\(code): \(message)"
        case let .unreachable(url, reason): "cannot connect to \(url): \(reason)"
        }
    }

    /// The refusal a non-2xx answer carries: Cohost's `{"error":{"code","message"}}`, else `http_<status>` and the
    /// body's first line.
    public static func refusal(status: Int, body: Data) -> ClientError {
        if let envelope = try? JSONDecoder().decode(ErrorBody.self, from: body) {
            return .refused(status: status, code: envelope.error.code, message: envelope.error.message)
        }
        let text = String(decoding: body.prefix(200), as: UTF8.self).split(whereSeparator: \.isNewline).first
        return .refused(
            status: status, code: "http_\(status)",
            message: text.map(String.init) ?? "HTTP status \(status) with no body")
    }
}
