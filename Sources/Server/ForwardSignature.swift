import Foundation
import HMAC
import HTTPTypes
import Hummingbird

/// The proof that a forwarded call or a relayed events socket comes from a node of this cluster: HMAC-SHA256 under
/// `cluster_secret` over the method, the target (path and query), the time, the sending node and the body. It holds
/// for 30 s either way of the receiver's clock; a call that carries `X-Cohost-Forwarded-By` without it is a client's,
/// and the header is dropped.
enum ForwardSignature {
    static let node = HTTPField.Name("X-Cohost-Forwarded-By")!
    static let time = HTTPField.Name("X-Cohost-Forwarded-At")!
    static let mac = HTTPField.Name("X-Cohost-Forward-Signature")!
    static let windowSeconds: Int64 = 30

    static func code(
        secret: String, method: String, target: String, at time: Int64, node: String, body: [UInt8]
    )
        -> String
    {
        let input = Array("\(method)\n\(target)\n\(time)\n\(node)\n".utf8) + body
        return HMAC.code(.sha256, key: Array(secret.utf8), data: input).map { String(format: "%02x", $0) }.joined()
    }

    /// The three headers a node adds to what it sends on.
    static func fields(
        secret: String, method: String, target: String, node: String, body: [UInt8], now: Int64 = unixNow()
    ) -> [(HTTPField.Name, String)] {
        [
            (Self.node, node), (time, "\(now)"),
            (mac, code(secret: secret, method: method, target: target, at: now, node: node, body: body)),
        ]
    }

    /// Whether `fields` carry a valid signature of this call, made within the window.
    static func isValid(
        _ fields: HTTPFields, secret: String, method: String, target: String, body: [UInt8], now: Int64 = unixNow()
    ) -> Bool {
        guard let node = fields[node], let timeText = fields[time], let time = Int64(timeText),
            let given = fields[mac], abs(now - time) <= windowSeconds
        else { return false }
        let expected = code(secret: secret, method: method, target: target, at: time, node: node, body: body)
        // Constant time over equal lengths.
        guard given.utf8.count == expected.utf8.count else { return false }
        return zip(given.utf8, expected.utf8).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }

    /// The fields without the three headers.
    static func stripped(_ fields: HTTPFields) -> HTTPFields {
        var fields = fields
        fields[node] = nil
        fields[time] = nil
        fields[mac] = nil
        return fields
    }

    static func unixNow() -> Int64 { Int64(Date().timeIntervalSince1970) }
}

/// Runs before the cluster proxy and every route: a call that says it was forwarded by a node keeps that mark only
/// when its signature holds. Otherwise the mark is dropped and the call is handled as any client's (so it may be
/// forwarded itself); a client cannot make a node skip the proxy or the listing of other nodes' rooms.
struct ForwardedCallCheck<Context: RequestContext>: RouterMiddleware {
    let secret: String

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard request.headers[ForwardSignature.node] != nil || request.headers[ForwardSignature.mac] != nil else {
            return try await next(request, context)
        }
        var request = request
        let body: ByteBuffer
        do { body = try await request.collectBody(upTo: ClusterForwarding.maxBody) } catch {
            throw APIError(
                status: .contentTooLarge, code: "body_too_large",
                message: "request body larger than \(ClusterForwarding.maxBody) bytes")
        }
        let valid = ForwardSignature.isValid(
            request.headers, secret: secret, method: request.method.rawValue, target: request.uri.description,
            body: Array(buffer: body))
        guard valid else {
            var head = request.head
            head.headerFields = ForwardSignature.stripped(head.headerFields)
            return try await next(Request(head: head, body: .init(buffer: body)), context)
        }
        return try await next(request, context)
    }
}
