import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The HTTP API of protocol/openapi.yaml as one call: a method, a path, an optional JSON body. A 2xx answer gives
/// its body; anything else throws a `ClientError` (the server's refusal, or no answer).
public struct APIClient: Sendable {
    public let server: ServerURL
    public let token: String
    /// Long enough for the calls that wait on the room (closing one flushes its outputs).
    public var timeout: TimeInterval = 30

    public init(server: ServerURL, token: String) {
        self.server = server
        self.token = token
    }

    /// Sends the request; `json` goes as `application/json`.
    public func send(_ method: String, _ path: String, json: Data? = nil) async throws -> Data {
        try await send(method, path, body: json, contentType: "application/json")
    }

    /// Sends the request with `body` of `contentType` (a join's `application/sdp` offer, say).
    public func send(_ method: String, _ path: String, body: Data?, contentType: String) async throws -> Data {
        guard let url = server.url(path) else {
            throw ClientError.unreachable(url: server.base + path, reason: "not a valid URL")
        }
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        request.httpMethod = method
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if let body {
            request.httpBody = body
            request.setValue(contentType, forHTTPHeaderField: "Content-Type")
        }
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await Self.session.data(for: request)
        } catch {
            throw ClientError.unreachable(url: server.base, reason: Self.reason(error))
        }
        guard let http = response as? HTTPURLResponse else {
            throw ClientError.unreachable(url: server.base, reason: "the answer is not HTTP")
        }
        guard (200..<300).contains(http.statusCode) else {
            throw ClientError.refusal(status: http.statusCode, body: data)
        }
        return data
    }

    /// No cookies, no cache: every call carries its own token and wants the room's current state.
    private static let session = URLSession(configuration: .ephemeral)

    private static func reason(_ error: any Error) -> String {
        if let error = error as? URLError {
            switch error.code {
            case .cannotConnectToHost: return "connection refused"
            case .timedOut: return "timed out"
            case .cannotFindHost, .dnsLookupFailed: return "unknown host"
            default: break
            }
        }
        return error.localizedDescription
    }
}
